import type { ExampleDraft } from './templateExamples.ts';

// A template as a client submits it, before it is known to follow the rules (templates.ts checks
// it; authenticationTemplates.ts for the AUTHENTICATION category).

/** A button as submitted: an OTP button, or a QUICK_REPLY, URL, PHONE_NUMBER or COPY_CODE one. */
export interface ButtonDraft {
  type: string;
  otp_type?: string;
  text?: string;
  autofill_text?: string;
  supported_apps?: ReadonlyArray<{ package_name: string; signature_hash: string }>;
  url?: string;
  phone_number?: string;
  example?: string | readonly string[];
}

/** A component as submitted, before it is known to follow the rules. */
export interface ComponentDraft {
  type: string;
  format?: string;
  text?: string;
  example?: ExampleDraft;
  add_security_recommendation?: boolean;
  code_expiration_minutes?: number;
  buttons?: readonly ButtonDraft[];
}

/** A template as submitted, before it is known to follow the rules. */
export interface TemplateDraft {
  name: string;
  language: string;
  category: string;
  parameter_format?: string;
  components: readonly ComponentDraft[];
}

// Row types of every table. Times are epoch milliseconds; JSON columns are text.

export interface ProjectsTable {
  id: string;
  name: string;
  owner_email: string;
  provider_phone_number_id: string | null;
  /** AES-256-GCM ciphertext of the provider access token (see domain/secretBox.ts). */
  provider_access_token_enc: string | null;
  callback_url: string | null;
  webhook_secret_enc: string;
  previous_webhook_secret_enc: string | null;
  previous_webhook_secret_expires_at: number | null;
  credentials_updated_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface Tables {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
}

// How fast svc sends from one phone number. The provider's throughput for the number governs once
// it is known (Meta: 80 messages/s, 1,000 once upgraded); SVC_PROVIDER_MAX_MPS is the pace while
// the provider has not said (the sandbox never does) and, when the operator sets it, also a cap.

export interface PaceSettings {
  /** SVC_PROVIDER_MAX_MPS, or its default (80, Meta's default throughput). */
  readonly providerMaxMps: number;
  /** Whether SVC_PROVIDER_MAX_MPS was set: then no number goes faster, whatever the provider allows. */
  readonly providerMaxMpsIsCap: boolean;
}

export function sendPaceOf(reportedMps: number | null, settings: PaceSettings): number {
  if (reportedMps === null) return settings.providerMaxMps;
  return settings.providerMaxMpsIsCap ? Math.min(reportedMps, settings.providerMaxMps) : reportedMps;
}

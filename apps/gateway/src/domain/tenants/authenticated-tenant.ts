// Who a request is authenticated as: the tenant, by which credential, with its limits (shared by the credential cache and tenants.ts).

/** Per-tenant overrides of the admission limits; a missing value means the gateway default. */
export interface LimitOverrides {
  submissionsPerWindow?: number;
  windowSeconds?: number;
  maxConcurrentRequests?: number;
  /** Reads per READ_RATE_WINDOW_SECONDS (domain/limits/reads.ts). */
  readsPerWindow?: number;
  /** Reads in progress at once on one replica. */
  maxConcurrentReads?: number;
}

export interface AuthenticatedTenant {
  tenantId: string;
  credential: 'api_key' | 'cabinet_token' | 'project_key';
  limits: LimitOverrides;
  /** A project+environment key's scope (browser-workflow API); absent for tenant keys and cabinet tokens. */
  scope?: { projectId: string; environmentId: string };
}

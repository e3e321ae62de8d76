/**
 * Browser workflows (SPEC "Client (cabinet) API" browser writes and "Browser workflow API"). The
 * spec shows neither these records nor the operations that create them; the shapes here are this
 * service's design, documented in docs/api.md "Browser workflows".
 */
import type { CreateDataRequestBody } from './index.js';

export type WorkspaceRole = 'owner' | 'admin' | 'member';

export interface CreateWorkspaceBody {
  /**
   * @minLength 1
   * @maxLength 200
   */
  name: string;
  /**
   * The workspace's first owner (a workspace always has at least one).
   * @isInt
   * @minimum 1
   */
  owner_user_id: number;
}

export interface Workspace {
  id: string;
  name: string;
  created_at: string;
}

export interface WorkspacePage {
  items: Workspace[];
  next_cursor: string | null;
}

/** SPEC: `POST /client/browser/workspaces/{workspaceId}/projects`. */
export interface CreateProjectBody {
  /**
   * @minLength 1
   * @maxLength 200
   */
  name: string;
  /**
   * Lower-case letters, digits and dashes; unique in the workspace (409 CONFLICT otherwise).
   * @pattern ^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$
   */
  slug: string;
  /**
   * Most tokens the project's workflow runs may have charged in total; null or absent: no cap.
   * @isInt
   * @minimum 0
   */
  budget_cap_tokens?: number | null;
}

export interface ProjectEnvironment {
  id: string;
  /** `production` or `staging` (both created with the project). */
  name: string;
}

export interface Project {
  id: string;
  workspace_id: string;
  name: string;
  slug: string;
  budget_cap_tokens: number | null;
  environments: ProjectEnvironment[];
  created_at: string;
}

export interface ProjectPage {
  items: Project[];
  next_cursor: string | null;
}

/** SPEC: `POST /client/browser/workspaces/{workspaceId}/members`. */
export interface AddMemberBody {
  /**
   * @isInt
   * @minimum 1
   */
  user_id: number;
  role: WorkspaceRole;
}

export interface WorkspaceMember {
  user_id: number;
  role: WorkspaceRole;
  created_at: string;
  updated_at: string;
}

export interface WorkspaceMemberPage {
  items: WorkspaceMember[];
  next_cursor: string | null;
}

export interface CreateProjectKeyBody {
  /**
   * @minLength 1
   * @maxLength 100
   */
  label?: string;
}

/** A project+environment key of the browser-workflow API. `api_key` is shown once, at issue. */
export interface ProjectKey {
  id: string;
  project_id: string;
  environment_id: string;
  label: string;
  /** `wdrp_…`; absent on an idempotent replay (it is never stored). */
  api_key?: string;
  created_at: string;
}

export interface CreateWorkflowBody {
  /**
   * @minLength 1
   * @maxLength 200
   */
  name: string;
}

export type WorkflowVersionStatus = 'draft' | 'published';

/**
 * A browser request template: the submission body of `POST /api/v1/data/requests` (same rules),
 * rendered in the browser (`mode` absent, `browser` or `residential_browser`; `javascript` not false).
 */
export type WorkflowDefinition = CreateDataRequestBody;

export interface WorkflowVersion {
  id: string;
  workflow_id: string;
  /** 1, 2, … in the order versions were created. */
  number: number;
  status: WorkflowVersionStatus;
  /** Incremented by each edit of the draft; publish names the current one. */
  revision: number;
  /** True for the workflow's active version. */
  active: boolean;
  definition: WorkflowDefinition;
  created_at: string;
  updated_at: string;
  published_at: string | null;
}

export interface Workflow {
  id: string;
  project_id: string;
  name: string;
  /** Incremented by each activation; activate names the current one (optimistic concurrency). */
  workflow_version: number;
  active_version_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface WorkflowDetail extends Workflow {
  /** Newest first. */
  versions: WorkflowVersion[];
}

export interface WorkflowPage {
  items: Workflow[];
  next_cursor: string | null;
}

export interface CreateWorkflowVersionBody {
  definition: WorkflowDefinition;
}

export interface UpdateWorkflowVersionBody {
  /**
   * The draft's current revision (409 CONFLICT when stale).
   * @isInt
   */
  revision: number;
  definition: WorkflowDefinition;
}

/** SPEC: `POST /client/browser/workflow-versions/{versionId}/publish`. */
export interface PublishWorkflowVersionBody {
  /**
   * The draft's current revision (409 CONFLICT when stale).
   * @isInt
   */
  revision: number;
}

/** SPEC: `POST /client/browser/workflows/{workflowId}/versions/{versionId}/activate`. */
export interface ActivateWorkflowVersionBody {
  /**
   * The workflow's current `workflow_version` (409 CONFLICT when stale).
   * @isInt
   */
  workflow_version: number;
}

export type WebhookEventType =
  | 'request.accepted'
  | 'request.running'
  | 'request.completed'
  | 'request.failed'
  | 'request.cancelled'
  | 'tokens.settled'
  | 'tokens.refunded'
  | 'extraction.completed'
  | 'extraction.failed'
  | 'billing.balance_low'
  | 'billing.balance_exhausted'
  | 'webhook.endpoint_disabled'
  | 'batch.completed';

export interface CreateWebhookBody {
  /**
   * HTTPS (or HTTP) URL of the receiver; private, loopback, link-local and metadata addresses are refused.
   * @minLength 1
   * @maxLength 2048
   */
  url: string;
  /**
   * @minItems 1
   * @maxItems 11
   */
  event_types: WebhookEventType[];
  /** @maxLength 500 */
  description?: string | null;
}

export interface UpdateWebhookBody {
  /**
   * @minLength 1
   * @maxLength 2048
   */
  url?: string;
  /**
   * @minItems 1
   * @maxItems 11
   */
  event_types?: WebhookEventType[];
  /** @maxLength 500 */
  description?: string | null;
  /** `true` re-enables a disabled endpoint (its pending deliveries resume). */
  enabled?: true;
}

export interface RotateWebhookSecretBody {
  /**
   * How long the previous secret keeps signing beside the new one, seconds (default a day; 0 revokes it at once).
   * @isInt
   * @minimum 0
   * @maximum 604800
   */
  previous_valid_seconds?: number;
}

/** A webhook endpoint, redacted: the URL's origin only, never its path, query or secret. */
export interface WebhookEndpoint {
  id: string;
  project_id: string | null;
  environment_id: string | null;
  url_origin: string;
  event_types: WebhookEventType[];
  description: string | null;
  status: 'enabled' | 'disabled';
  disabled_reason: 'manual' | 'gone' | 'sustained_failure' | null;
  disabled_at: string | null;
  created_at: string;
  updated_at: string;
}

/** The answer to a creation or a rotation: the `whsec_` signing secret, shown this once. */
export interface WebhookEndpointWithSecret {
  endpoint: WebhookEndpoint;
  /** The `whsec_` signing secret, in this answer only: absent when the answer is an Idempotency-Key replay (rotate for a new one). */
  secret?: string;
}

/** A message (one event for one endpoint) and where its schedule stands (the answer to a redelivery). */
export interface WebhookMessage {
  /** The `webhook-id` header of its deliveries (`msg_…`). */
  id: string;
  event_type: string;
  status: 'pending' | 'delivered' | 'failed';
  /** @isInt */
  attempts: number;
  /** @format date-time */
  next_attempt_at: string | null;
  /** @format date-time */
  delivered_at: string | null;
  /** @format date-time */
  created_at: string;
}

export interface WebhookEndpointPage {
  items: WebhookEndpoint[];
  next_cursor: string | null;
}

/** One delivery attempt, redacted: no payload, no secret, no URL beyond origins. */
export interface WebhookDelivery {
  id: string;
  /** The `webhook-id` header: stable across the attempts of one event to one endpoint. */
  message_id: string;
  event_type: string;
  attempt: number;
  outcome: 'delivered' | 'failed';
  status_code: number | null;
  latency_ms: number;
  /** The start of the receiver's answer (at most 256 characters), URLs reduced to origins, tokens masked. */
  response_excerpt: string | null;
  /** Transport failure class: `timeout`, `connection_refused`, `connection_reset`, `dns`, `target_blocked`, `redirect`, `tls`, `network`. */
  error: string | null;
  created_at: string;
}

export interface WebhookDeliveryPage {
  items: WebhookDelivery[];
  next_cursor: string | null;
}

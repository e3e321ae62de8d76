// Generated from openapi/openapi.json by scripts/generate.mjs (openapi-typescript). Do not edit.
export interface paths {
    "/api/v1/browser/projects/{projectId}/environments/{environmentId}/runs/{runId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a workflow run
         * @description Beyond the spec: a run of this project and environment, as GET /api/v1/data/requests/{id}
         *     answers it (with `workflow_run`). Another request is a 404.
         */
        get: operations["ReadWorkflowRun"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/browser/projects/{projectId}/environments/{environmentId}/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the webhook endpoints of the key's project and environment
         * @description The project+environment's webhook endpoints, redacted (URL origin only), a cursor page.
         */
        get: operations["ListWebhookEndpoints"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/browser/projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a webhook endpoint's delivery attempts
         * @description A webhook's delivery attempts, newest first, redacted (no payload, no secret, no URL beyond
         *     origins; the start of the receiver's answer, masked), a cursor page.
         */
        get: operations["ListWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/browser/projects/{projectId}/environments/{environmentId}/workflows/{workflowId}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a workflow's active version
         * @description Beyond the spec: run the workflow's active version as a browser request of the tenant, linked to
         *     the key's project and environment (same validation, limits, pipeline and billing as a
         *     submission; the project's budget cap holds every run within it). Its lifecycle events reach the
         *     project's webhook endpoints. Answers like POST /api/v1/data/requests, with `workflow_run`.
         */
        post: operations["RunWorkflow"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the tenant's API keys
         * @description Beyond the spec: every data API key of the tenant, oldest first, revoked and expired ones
         *     included, with its prefix, label, dates and state; never the key itself.
         */
        get: operations["ListClientApiKeys"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/api-keys/{keyId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke an API key
         * @description Beyond the spec: revoke one of the tenant's keys. Every gateway replica refuses it (401) within
         *     seconds, as with an operator's `admin revoke-key`. Revoking twice is harmless; revoking the key
         *     in use by the tenant's own clients is allowed (they get 401 from then on).
         */
        delete: operations["RevokeClientApiKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/batches": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Submit a batch of pages to fetch (cabinet)
         * @description Submit up to 1,000 jobs as one batch; each job takes the fields of a single request
         *     submission. All jobs are admitted together or not at all (402 and nothing created when the
         *     balance cannot reserve them all). When the `Idempotency-Key` header is omitted the server
         *     generates an internal key, so the submission is new.
         */
        post: operations["CreateCabinetBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/projects/{projectId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a project
         * @description Beyond the spec: one project with its environments.
         */
        get: operations["GetBrowserProject"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/projects/{projectId}/environments/{environmentId}/api-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a project+environment's keys
         * @description Beyond the spec: the unrevoked keys of a project and environment (never the keys themselves).
         */
        get: operations["ListBrowserProjectKeys"];
        put?: never;
        /**
         * Issue a project+environment key
         * @description Beyond the spec: issue a key of the browser-workflow API for one project and environment. The
         *     key (`api_key`) is in this answer only; it is stored hashed.
         */
        post: operations["IssueBrowserProjectKey"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/projects/{projectId}/environments/{environmentId}/api-keys/{keyId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Revoke a project+environment key
         * @description Beyond the spec: revoke a key (at once; revoking twice is harmless).
         */
        delete: operations["RevokeBrowserProjectKey"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/projects/{projectId}/environments/{environmentId}/webhooks": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a project+environment's webhook endpoints
         * @description Beyond the spec: the webhook endpoints of a project and environment (the cabinet's view of the browser-workflow listing).
         */
        get: operations["ListBrowserWebhooks"];
        put?: never;
        /**
         * Create a webhook endpoint
         * @description Beyond the spec: create a webhook endpoint of a project and environment. The signing secret
         *     (`whsec_…`) is in this answer only. A URL whose host is a private, loopback, link-local or
         *     metadata address is refused (422).
         */
        post: operations["CreateBrowserWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a webhook endpoint
         * @description Beyond the spec: one webhook endpoint, redacted.
         */
        get: operations["GetBrowserWebhook"];
        put?: never;
        post?: never;
        /**
         * Delete a webhook endpoint
         * @description Beyond the spec: delete an endpoint with its pending deliveries and attempts.
         */
        delete: operations["DeleteBrowserWebhook"];
        options?: never;
        head?: never;
        /**
         * Update or re-enable a webhook endpoint
         * @description Beyond the spec: change an endpoint's URL, event types or description; `enabled: true` re-enables it.
         */
        patch: operations["UpdateBrowserWebhook"];
        trace?: never;
    };
    "/api/v1/client/browser/projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a webhook endpoint's delivery attempts
         * @description Beyond the spec: an endpoint's delivery attempts, redacted (the cabinet's view of the browser-workflow listing).
         */
        get: operations["ListBrowserWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}/deliveries/{messageId}/redeliver": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Redeliver a webhook message
         * @description Beyond the spec: deliver one message again now (by its `webhook-id`, the deliveries list's
         *     `message_id`), whatever its status: same webhook-id and body, its retry schedule started over.
         */
        post: operations["RedeliverBrowserWebhookMessage"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}/disable": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Disable a webhook endpoint
         * @description Beyond the spec: disable an endpoint (its pending deliveries wait; it takes no new events until re-enabled).
         */
        post: operations["DisableBrowserWebhook"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/projects/{projectId}/environments/{environmentId}/webhooks/{webhookId}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate a webhook endpoint's signing secret
         * @description Beyond the spec: a new signing secret, in this answer only; the previous one keeps signing beside
         *     it for `previous_valid_seconds` (default a day; 0 revokes it at once).
         */
        post: operations["RotateBrowserWebhookSecret"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/projects/{projectId}/workflows": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a project's workflows
         * @description Beyond the spec: a project's workflows, a cursor page in creation order.
         */
        get: operations["ListBrowserWorkflows"];
        put?: never;
        /**
         * Create a workflow
         * @description Beyond the spec: create a workflow in a project (no version yet).
         */
        post: operations["CreateBrowserWorkflow"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/workflow-versions/{versionId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        /**
         * Edit a draft version
         * @description Beyond the spec: edit a draft with its current `revision` (stale: 409 CONFLICT; published: 409 CONFLICT); the edit increments it.
         */
        patch: operations["UpdateBrowserWorkflowVersion"];
        trace?: never;
    };
    "/api/v1/client/browser/workflow-versions/{versionId}/publish": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Publish a draft version
         * @description SPEC: publish a draft with its current `revision`; the version is immutable from then on. Answers
         *     204 with no body. A stale revision, or a version already published, is 409 CONFLICT.
         */
        post: operations["PublishBrowserWorkflowVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/workflows/{workflowId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a workflow with its versions
         * @description Beyond the spec: a workflow with its `workflow_version`, its active version and every version, newest first.
         */
        get: operations["GetBrowserWorkflow"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/workflows/{workflowId}/versions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Add a draft version to a workflow
         * @description Beyond the spec: add a draft version (the next number, `revision` 1). The definition is a
         *     submission body checked by the submission rules (422 VALIDATION_FAILED, fields under `definition.`).
         */
        post: operations["CreateBrowserWorkflowVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/workflows/{workflowId}/versions/{versionId}/activate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Activate a published version (or roll back to one)
         * @description SPEC: make a published version the workflow's active one, given the workflow's current
         *     `workflow_version` (each activation increments it). Activating an earlier published version is
         *     the rollback. Answers 204 with no body. A stale `workflow_version` or a draft is 409 CONFLICT.
         */
        post: operations["ActivateBrowserWorkflowVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/workspaces": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List workspaces
         * @description Beyond the spec: the tenant's workspaces, a cursor page in creation order.
         */
        get: operations["ListBrowserWorkspaces"];
        put?: never;
        /**
         * Create a workspace
         * @description Beyond the spec: create a workspace with its first owner.
         */
        post: operations["CreateBrowserWorkspace"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/workspaces/{workspaceId}/members": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a workspace's members
         * @description Beyond the spec: the workspace's members by user id, a cursor page.
         */
        get: operations["ListBrowserMembers"];
        put?: never;
        /**
         * Add a member or change its role
         * @description SPEC: add a member to the workspace, or change an existing member's role. Answers 204 with no
         *     body. Demoting the workspace's last owner is 409 CONFLICT.
         */
        post: operations["PutBrowserMember"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/workspaces/{workspaceId}/members/{userId}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /**
         * Remove a member
         * @description Beyond the spec: remove a member. Removing the workspace's last owner is 409 CONFLICT.
         */
        delete: operations["RemoveBrowserMember"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/browser/workspaces/{workspaceId}/projects": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a workspace's projects
         * @description Beyond the spec: the workspace's projects with their environments, a cursor page in creation order.
         */
        get: operations["ListBrowserProjects"];
        put?: never;
        /**
         * Create a project
         * @description SPEC: create a project in the workspace, with its environments `production` and `staging`.
         *     Answers 204 with no body; the new project's address is in `Location`
         *     (`/api/v1/client/browser/projects/{projectId}`). A slug already used in the workspace is 409 CONFLICT.
         */
        post: operations["CreateBrowserProject"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/recipes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List the tenant's recipes (cabinet)
         * @description The tenant's extraction recipes, oldest first, as an offset page.
         */
        get: operations["ListClientRecipes"];
        put?: never;
        /**
         * Create a recipe
         * @description Create a recipe (status `draft`). With `definition` its version 1 is created too (checked
         *     against DSL v1 and the capability limits: 422 VALIDATION_FAILED names each offending rule), and
         *     `activate: true` makes it active at once.
         */
        post: operations["CreateClientRecipe"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/recipes/capabilities": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the recipe capabilities
         * @description What the recipe feature offers: DSL version, limits, extraction field kinds, auto-repair and billing terms.
         */
        get: operations["GetRecipeCapabilities"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/recipes/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a recipe with its versions and repairs
         * @description One recipe of the tenant with all its versions, newest first, and its automatic repairs (why
         *     each was made, how it ended, what it cost). Another tenant's recipe is a 404.
         */
        get: operations["GetClientRecipe"];
        put?: never;
        post?: never;
        /**
         * Delete a recipe
         * @description Delete a recipe and its versions. Extraction results already stored stay readable; a request
         *     still waiting for its page when its recipe is deleted ends with a failed run (RECIPE_VERSION_GONE).
         */
        delete: operations["DeleteClientRecipe"];
        options?: never;
        head?: never;
        /**
         * Update a recipe's settings
         * @description Change a recipe's name, description, sample URL or flags. Its rules change by adding a version.
         *     `auto_repair_enabled` turns automatic repair on; `continuous_repair_confirmed: true` records
         *     the confirmation that allows repairs beyond `automatic_repairs_per_window` (false withdraws it).
         */
        patch: operations["UpdateClientRecipe"];
        trace?: never;
    };
    "/api/v1/client/recipes/{id}/generate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Generate a recipe version from a prompt
         * @description Generate a version from a prompt and a sample page (beyond the spec), synchronously: at most
         *     `generation_max_attempts` attempts, each one's rules run on the sample page; the first that
         *     finds every required field (and something) is saved as a new version, a draft unless
         *     `activate`. The offline heuristic reads structured data (JSON-LD, microdata, OpenGraph), the
         *     `<h1>`, label/value pairs and repeated blocks; the LLM (when the deployment has one) any
         *     chat-completions server. No attempt worked: 422 with each attempt's issues, nothing saved.
         *     Model calls are billed per the capabilities' `billing` terms: a preflight hold of
         *     `preflight_required_balance_tokens` before the first call (402 INSUFFICIENT_CREDITS, nothing
         *     called, when the balance is short), then the exact charge of the model's usage, shown on the
         *     statement as `recipe_generation`; a failed generation is charged only when
         *     `failed_operations_charged`. The heuristic (`method: heuristic`) is not charged.
         */
        post: operations["GenerateClientRecipeVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/recipes/{id}/versions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Add a recipe version
         * @description Add a version (the next number) with new rules; `activate: true` makes it the active one.
         */
        post: operations["CreateClientRecipeVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/recipes/{id}/versions/{versionId}/activate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Activate a recipe version
         * @description Make a version the active one (status becomes `active`); also how to roll back to an earlier version.
         *     Submissions naming the recipe without a version use the active one.
         */
        post: operations["ActivateClientRecipeVersion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/client/requests": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Submit a page to fetch (cabinet)
         * @description Submit a request from the cabinet. Same body, validation, limits and billing as
         *     POST /api/v1/data/requests.
         */
        post: operations["CreateClientRequest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/balance": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Token balance
         * @description Tokens available now and tokens held by requests in flight.
         */
        get: operations["GetBalance"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/batches": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Submit a batch of pages to fetch
         * @description Submit up to 1,000 jobs as one batch (beyond the spec; the Data API twin of the cabinet's
         *     POST /api/v1/client/batches, same body and answer). All jobs are admitted together or not at
         *     all: when the balance cannot reserve every job's base price the answer is 402 and nothing is
         *     created. Without an `Idempotency-Key` every submission is a new batch.
         */
        post: operations["CreateDataBatch"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/batches/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read one batch and its jobs
         * @description One batch of the tenant: status aggregated from its jobs, counters, token sums and the jobs
         *     themselves (failed jobs carry a redacted error). Another tenant's batch is a 404.
         */
        get: operations["GetDataBatch"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/recipes": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List extraction recipes
         * @description The tenant's extraction recipes with each active version and its field schema, as an offset page.
         */
        get: operations["ListDataRecipes"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/requests": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List requests (cursor pages)
         * @description The tenant's requests, newest first, as cursor pages: pass `meta.next_cursor` back unchanged
         *     as `cursor` for the next page. Pages are keyed on (created_at, id), so requests created while
         *     paging never shift a page: no duplicates, no gaps.
         */
        get: operations["ListRequests"];
        put?: never;
        /**
         * Submit a page to fetch
         * @description Submit a request to fetch a page. The request runs asynchronously; poll its detail or follow
         *     its events. Every rule of the body is checked (422 `VALIDATION_FAILED` lists each offending
         *     field in `details`, e.g. `headers.Host`); unknown fields are rejected.
         *     Submissions count against the tenant's rate (`RateLimit-*` headers on every answer) and
         *     concurrency limits (429 `RATE_LIMITED` / `CONCURRENCY_LIMITED` with `Retry-After`).
         */
        post: operations["CreateRequest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/requests/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read one request
         * @description Read one request of the caller. Another tenant's id is a 404.
         */
        get: operations["GetRequest"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/requests/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Cancel a request
         * @description Cancel a pending or running request (beyond the spec): it becomes `cancelled`, its reserved
         *     tokens are refunded, and a worker still running it can no longer complete it. Cancelling a
         *     cancelled request answers the same; a completed or failed one is a 409.
         */
        post: operations["CancelRequest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/requests/{id}/debug-artifacts/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Download a debug artifact of a failed request
         * @description One debug artifact of a failed request that opted in with `debug_artifacts: true` (beyond the
         *     spec): `screenshot.png` or `report.json`, as listed in the request detail's `debug_artifacts`.
         *     Kept only for failed requests, encrypted at rest, readable only by the tenant, purged at
         *     `debug_artifacts.expires_at`.
         */
        get: operations["GetDebugArtifact"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/requests/{id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * List a request's events
         * @description The request's append-only event history, in ascending creation order. Every entry is
         *     provider-neutral; its `id` is the per-request sequence number used by the event stream.
         */
        get: operations["ListEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/requests/{id}/events/stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Follow a request's events (Server-Sent Events)
         * @description Follow the request's events live as Server-Sent Events (`text/event-stream`). Each message has
         *     `id: <event id>` and `data: <RequestEvent JSON>` (the same object as a history entry; no
         *     `event:` field, so `EventSource.onmessage` receives every one). The stream first replays the
         *     stored events after `Last-Event-ID` (all of them without the header), then sends new ones as
         *     they happen, each once, in order. Comment lines (`: heartbeat`) keep idle connections open.
         *     It closes after the event that makes the request `completed`, `failed` or `cancelled`, or after
         *     its maximum duration (5 minutes by default): then reconnect with `Last-Event-ID` set to the last
         *     id received. A request that is already terminal with nothing after `Last-Event-ID` answers
         *     204, which also stops a browser EventSource from reconnecting.
         *
         *     Served by a plain Express handler (apps/gateway/src/sse); this operation only documents it.
         */
        get: operations["StreamEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/requests/{id}/extraction": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read a request's extraction result
         * @description The structured result of an extraction request (beyond the spec): the run's `data`, validated
         *     against its recipe version's field schema, once the run is `completed`; or, for a `failed` run,
         *     its `error` (e.g. `REQUIRED_FIELDS_MISSING` with one detail per missing field, while the page
         *     itself may have completed: see `page_status`).
         */
        get: operations["GetExtraction"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/requests/{id}/result": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Read the fetched page
         * @description The fetched page of a completed request (beyond the spec): as fetched with its content type
         *     (`format=html`, the default), or reduced to its readable text (`format=text`, `text/plain`).
         *     Available until `result_expires_at`.
         */
        get: operations["GetResult"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/requests/{id}/retry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Retry a failed request as a new one
         * @description Retry a failed request as a new request (new id) with the same persisted inputs, browser
         *     actions included. The source request is kept unchanged. With an `Idempotency-Key`, repeating
         *     the retry replays it for free; the same key used for anything else is a 409.
         */
        post: operations["RetryRequest"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/statement": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Itemised token statement
         * @description Every movement of the tenant's tokens, newest first, each with its request id: holds at
         *     admission, settlements and refunds, deferred CAPTCHA/traffic charges, top-ups, grants and
         *     corrections. Nothing is edited in place: a correction is a new line.
         */
        get: operations["GetStatement"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/api/v1/data/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Proxy traffic of the last 30 days
         * @description Proxy traffic of the last 30 days: request, response and total bytes, tokens charged for
         *     traffic, requests charged, and requests whose traffic could not be measured (counted there,
         *     never as zero bytes), in total and per proxy type. No provider or routing detail is returned.
         */
        get: operations["GetUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description SPEC: `POST /client/browser/workflows/{workflowId}/versions/{versionId}/activate`. */
        ActivateWorkflowVersionBody: {
            /**
             * Format: int32
             * @description The workflow's current `workflow_version` (409 CONFLICT when stale).
             */
            workflow_version: number;
        };
        /** @description SPEC: `POST /client/browser/workspaces/{workspaceId}/members`. */
        AddMemberBody: {
            /** Format: int32 */
            user_id: number;
            role: components["schemas"]["WorkspaceRole"];
        };
        /** @description One attribute of the matched element (`href`, `src`, `content`, `datetime`...). */
        AttributeSource: {
            /** @enum {string} */
            type: "attribute";
            name: string;
        };
        /** @description GET /api/v1/data/batches/{id}. */
        Batch: {
            /** Format: uuid */
            id: string;
            status: components["schemas"]["BatchStatus"];
            /** Format: int32 */
            total_jobs: number;
            /** Format: int32 */
            completed_jobs: number;
            /** Format: int32 */
            failed_jobs: number;
            /** Format: int32 */
            base_tokens: number;
            /** Format: int32 */
            protected_tokens: number;
            /** Format: int32 */
            captcha_tokens: number;
            /** Format: date-time */
            created_at: string;
            /**
             * Format: date-time
             * @description When the last job finished; null while any job is not terminal.
             */
            finished_at: string | null;
            /** @description In submission order. */
            jobs: components["schemas"]["BatchJob"][];
        };
        /** @description A job nested in a batch read. */
        BatchJob: {
            /** Format: uuid */
            id: string;
            /**
             * Format: uri
             * @description Target origin only.
             */
            url: string;
            /**
             * @description The job's status as its request detail shows it: for an extraction job (`result_kind:
             *     extraction`) its readiness (`waiting_for_page`, `queued`, `running`, `completed`, `failed`),
             *     with the page's status in `page_status`.
             */
            status: components["schemas"]["DataVisibleStatus"];
            /** @enum {string} */
            result_kind?: "extraction";
            page_status?: components["schemas"]["DataJobStatus"];
            /** @description An extraction job's page error (`error` is then the extraction's). */
            page_error?: components["schemas"]["BatchJobError"] | null;
            route_mode: components["schemas"]["RouteMode"];
            proxy_type?: components["schemas"]["ProxyNetworkType"];
            token_state: components["schemas"]["DataTokenState"];
            cached: boolean;
            protected: boolean;
            /** Format: int32 */
            pricing_version: number;
            /** Format: int32 */
            base_tokens: number;
            /** Format: int32 */
            protected_tokens: number;
            /** Format: int32 */
            captcha_tokens: number;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            started_at: string | null;
            /** Format: date-time */
            finished_at: string | null;
            /** @description Set on failed and cancelled jobs only (an extraction job: its failed extraction's). */
            error: components["schemas"]["BatchJobError"] | null;
        };
        /** @description Redacted error of a failed or cancelled batch job: a stable code and a tenant-facing message. */
        BatchJobError: {
            code: components["schemas"]["RequestErrorCode"];
            message: string;
        };
        /**
         * @description Batch status, aggregated from its jobs' statuses as they show them (an extraction job's readiness):
         *     `pending` while every job is pending; `running` while any job is not terminal; once all are terminal, `completed` (all completed), `cancelled` (all
         *     cancelled), `failed` (none completed) or `partial` (some completed, some not).
         * @enum {string}
         */
        BatchStatus: "pending" | "running" | "completed" | "partial" | "failed" | "cancelled";
        /** @description One browser action (version 1), chosen by `type`. */
        BrowserAction: components["schemas"]["ClickAction"] | components["schemas"]["FillAction"] | components["schemas"]["TypeAction"] | components["schemas"]["PressAction"] | components["schemas"]["HoverAction"] | components["schemas"]["SelectAction"] | components["schemas"]["ScrollAction"] | components["schemas"]["WaitAction"] | components["schemas"]["WaitForSelectorAction"] | components["schemas"]["WaitForTextAction"];
        /** @description A job of the cabinet batch response. */
        CabinetBatchJob: {
            /** Format: uuid */
            id: string;
            /**
             * Format: uri
             * @description Target origin only.
             */
            url: string;
            /** @description As in a single submission's answer: an extraction job's readiness (`page_status` is the page's). */
            status: components["schemas"]["DataVisibleStatus"];
            /** @enum {string} */
            result_kind?: "extraction";
            page_status?: components["schemas"]["DataJobStatus"];
            cached: boolean;
            protected: boolean;
            /** Format: int32 */
            pricing_version: number;
            route_mode: components["schemas"]["RouteMode"];
            /** Format: int32 */
            base_tokens: number;
            /** Format: int32 */
            protected_tokens: number;
            /** Format: int32 */
            captcha_tokens: number;
            /** Format: date-time */
            created_at: string;
        };
        /** @description Response of a batch submission (cabinet and Data API). */
        CabinetBatchResponse: {
            /** Format: uuid */
            batch_id: string;
            status: components["schemas"]["BatchStatus"];
            jobs: components["schemas"]["CabinetBatchJob"][];
            /**
             * Format: int32
             * @description Tokens reserved by this submission; 0 on an idempotent replay.
             */
            charged_tokens: number;
            /** Format: int32 */
            pricing_version: number;
            /** @description The jobs' route mode when they share one, otherwise `mixed`. */
            route_mode: components["schemas"]["RouteMode"];
            idempotent_replay: boolean;
        };
        /** @description Response of POST /api/v1/client/requests (the cabinet's submission). */
        CabinetRequestResponse: {
            /** Format: uuid */
            id: string;
            /** @description Target origin only. */
            url?: string;
            /** @description As SubmissionResponse's: an extraction request's readiness. */
            status: components["schemas"]["DataVisibleStatus"];
            cached: boolean;
            protected: boolean;
            /** Format: int32 */
            base_tokens: number;
            /** Format: int32 */
            protected_tokens: number;
            /** Format: int32 */
            captcha_tokens: number;
            /** Format: date-time */
            created_at: string;
            /** Format: int32 */
            charged_tokens: number;
            /** Format: int32 */
            pricing_version: number;
            route_mode: components["schemas"]["RouteMode"];
            idempotent_replay: boolean;
            /** @enum {string} */
            result_kind?: "extraction";
            page_status?: string;
        };
        /** @description Click the first element matching `selector`. A click that would navigate, open a popup or start a download is blocked and reported as blocked. */
        ClickAction: {
            /** @description When true, a failure of this action does not fail the request. */
            optional?: boolean;
            /** @enum {string} */
            type: "click";
            selector: string;
        };
        /** @description Body of POST /api/v1/client/batches and POST /api/v1/data/batches. */
        CreateBatchBody: {
            /** @description Each job takes the fields of a single request submission. */
            jobs: components["schemas"]["CreateDataRequestBody"][];
        };
        /** @description Body of POST /api/v1/data/requests. */
        CreateDataRequestBody: {
            /** Format: uri */
            url: string;
            mode?: components["schemas"]["RequestMode"];
            /** @description ISO 3166-1 alpha-2 country code, normalized to upper case. */
            geo_country?: string;
            /**
             * Format: int32
             * @description Hard ceiling on the total credits of this request (the ledger stores it as a 32-bit integer).
             */
            max_credits_per_request?: number;
            proxy?: components["schemas"]["ProxySetting"];
            /** @description `premium` cannot be combined with proxy `off`. */
            proxy_type?: components["schemas"]["ProxyNetworkType"];
            /**
             * @description Extra request headers. Names are HTTP tokens; names and values must not contain control
             *     characters; hop-by-hop and transport-controlled headers (Host, Connection, Content-Length,
             *     Transfer-Encoding, Keep-Alive, Upgrade, TE, Trailer, Expect, HTTP2-Settings, Accept-Encoding,
             *     Cookie, Forwarded, Via, X-Real-IP, Proxy-*, X-Forwarded-*) are rejected. At most 100 entries.
             */
            headers?: components["schemas"]["Record_string.string_"];
            /** @description Cookies sent to the target: names are HTTP tokens, values without control characters or `;`. At most 100 entries. */
            cookies?: components["schemas"]["Record_string.string_"];
            /**
             * Format: int32
             * @default 45000
             */
            timeout_ms: number;
            /** @default true */
            javascript: boolean;
            resource_policy?: components["schemas"]["ResourcePolicy"];
            wait_for_selector?: string;
            user_agent?: string;
            result_text_selector?: string;
            /** @description At most 10,000 characters. */
            wait_for_text?: string | null;
            /**
             * @description Ordered declarative browser actions (version 1), each at most 4 KiB as JSON. A non-empty list
             *     promotes http, direct and auto to browser (residential to residential_browser), enables
             *     JavaScript, uses a fresh isolated context and bypasses the cache; the list is kept for retry.
             *     Only aggregates are reported: `result_meta.actions = {run, failed, blocked, elapsed_ms}`.
             */
            browser_actions?: components["schemas"]["BrowserAction"][];
            /** @default false */
            debug_artifacts: boolean;
            /** @default false */
            skip_cache: boolean;
            /**
             * Format: int32
             * @default 300
             */
            cache_ttl_seconds: number;
            /** @description Structured extraction: run a recipe over the fetched page (see GET .../{id}/extraction). */
            extraction?: components["schemas"]["ExtractionSettings"] | null;
        };
        /** @description SPEC: `POST /client/browser/workspaces/{workspaceId}/projects`. */
        CreateProjectBody: {
            name: string;
            /** @description Lower-case letters, digits and dashes; unique in the workspace (409 CONFLICT otherwise). */
            slug: string;
            /**
             * Format: int32
             * @description Most tokens the project's workflow runs may have charged in total; null or absent: no cap.
             */
            budget_cap_tokens?: number | null;
        };
        CreateProjectKeyBody: {
            label?: string;
        };
        /** @description Body of POST /api/v1/client/recipes. */
        CreateRecipeBody: {
            name: string;
            description?: string;
            /** Format: uri */
            sample_url: string;
            advanced_schema?: boolean;
            auto_repair_enabled?: boolean;
            /** @description Creates version 1 with the recipe. */
            definition?: components["schemas"]["RecipeDefinition"];
            /** @description Activate version 1 at once (default false: the recipe stays a `draft`). */
            activate?: boolean;
        };
        /** @description Body of POST /api/v1/client/recipes/{id}/versions. */
        CreateRecipeVersionBody: {
            definition: components["schemas"]["RecipeDefinition"];
            /** @description Activate the new version at once (default false). */
            activate?: boolean;
        };
        CreateWebhookBody: {
            /** @description HTTPS (or HTTP) URL of the receiver; private, loopback, link-local and metadata addresses are refused. */
            url: string;
            event_types: components["schemas"]["WebhookEventType"][];
            description?: string | null;
        };
        CreateWorkflowBody: {
            name: string;
        };
        CreateWorkflowVersionBody: {
            definition: components["schemas"]["WorkflowDefinition"];
        };
        CreateWorkspaceBody: {
            name: string;
            /**
             * Format: int32
             * @description The workspace's first owner (a workspace always has at least one).
             */
            owner_user_id: number;
        };
        /**
         * @description Status of a request as reported by create, retry and list.
         * @enum {string}
         */
        DataJobStatus: "pending" | "running" | "solving_captcha" | "completed" | "failed" | "cancelled";
        DataRecipe: {
            /** Format: uuid */
            id: string;
            name: string;
            description: string;
            /** Format: uri */
            sample_url: string;
            fields: components["schemas"]["RecipeField"][];
            advanced_schema: boolean;
            /** @description `draft` until a version is activated, then `active`. */
            status: string;
            /**
             * Format: uuid
             * @description Null while no version is active.
             */
            active_version_id: string | null;
            auto_repair_enabled: boolean;
            /**
             * Format: date-time
             * @description When continuous repair was confirmed; null when it was not.
             */
            continuous_repair_confirmed_at: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
            active_version: components["schemas"]["RecipeVersion"] | null;
        };
        /** @description Recipe list envelope of the data API: each item carries its active version and field schema. */
        DataRecipeList: {
            /** Format: int32 */
            total: number;
            /** Format: int32 */
            limit: number;
            /** Format: int32 */
            offset: number;
            has_more: boolean;
            items: components["schemas"]["DataRecipe"][];
        };
        /** @enum {string} */
        DataTokenState: "reserved" | "settlement_pending" | "settled" | "refunded";
        /** @description Status of a request as reported by its detail. */
        DataVisibleStatus: components["schemas"]["DataJobStatus"] | ("waiting_for_page" | "queued");
        DebugArtifactItem: {
            /** @description `screenshot.png` or `report.json`. */
            name: string;
            content_type: string;
            /** Format: int32 */
            bytes: number;
        };
        /** @description The debug artifacts of a failed request (read one with GET .../debug-artifacts/{name}). */
        DebugArtifacts: {
            items?: components["schemas"]["DebugArtifactItem"][];
            /**
             * Format: date-time
             * @description When they are purged.
             */
            expires_at?: string;
        };
        /** @description Why a run failed: `REQUIRED_FIELDS_MISSING` (details name each field), `PAGE_NOT_COMPLETED`, `PAGE_UNAVAILABLE`, `PAGE_TOO_LARGE`, `RECIPE_VERSION_GONE`, `SCHEMA_VIOLATION`, `EXTRACTION_BUDGET_EXCEEDED`. */
        ExtractionError: {
            code: components["schemas"]["ExtractionErrorCode"];
            message: string;
            details?: components["schemas"]["FieldIssue"][];
        };
        /**
         * @description The codes of a failed extraction run (recipe-extractor, `domain/run-extraction.ts`).
         * @enum {string}
         */
        ExtractionErrorCode: "REQUIRED_FIELDS_MISSING" | "PAGE_NOT_COMPLETED" | "PAGE_UNAVAILABLE" | "PAGE_TOO_LARGE" | "RECIPE_VERSION_GONE" | "SCHEMA_VIOLATION" | "EXTRACTION_BUDGET_EXCEEDED";
        /** @description Response of GET /api/v1/data/requests/{id}/extraction. */
        ExtractionResult: {
            /** Format: uuid */
            run_id: string;
            /** Format: uuid */
            recipe_id: string;
            /** Format: uuid */
            version_id: string;
            status: components["schemas"]["ExtractionRunStatus"];
            error: components["schemas"]["ExtractionError"] | null;
            /** Format: uuid */
            retried_from_run_id: string | null;
            /** Format: uuid */
            request_id: string;
            /** @description Status of the page fetch. */
            page_status: components["schemas"]["DataJobStatus"];
            /** @description The extracted object, valid against the version's field schema; null unless completed. */
            data: components["schemas"]["Record_string.unknown_"] | null;
            /** @description Optional fields that were not found or not of their type (null or left out of a list). */
            warnings: components["schemas"]["FieldIssue"][];
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            started_at: string | null;
            /** Format: date-time */
            finished_at: string | null;
        };
        /**
         * @description Status of an extraction run: waiting for its page, queued, running, then completed or failed.
         * @enum {string}
         */
        ExtractionRunStatus: "waiting_for_page" | "queued" | "running" | "completed" | "failed";
        /** @description `extraction` of a submission: run this recipe over the fetched page. */
        ExtractionSettings: {
            /** Format: uuid */
            recipe_id: string;
            /**
             * Format: uuid
             * @description A version of the recipe; default its active version (when it has none, the submission is refused).
             */
            version_id?: string;
        };
        ExtractionSource: components["schemas"]["TextSource"] | components["schemas"]["HtmlSource"] | components["schemas"]["AttributeSource"] | components["schemas"]["JsonLdSource"] | components["schemas"]["MicrodataSource"] | components["schemas"]["OpenGraphSource"];
        /** @description The extraction state of a request (in its detail). */
        ExtractionState: {
            /** Format: uuid */
            run_id: string;
            /** Format: uuid */
            recipe_id: string;
            /** Format: uuid */
            version_id: string;
            status: components["schemas"]["ExtractionRunStatus"];
            error: components["schemas"]["ExtractionError"] | null;
            /** Format: uuid */
            retried_from_run_id: string | null;
        };
        FieldIssue: {
            field: string;
            issue: string;
        };
        /** @description Replace the value of an input, textarea or contenteditable element (input and change events fire). */
        FillAction: {
            /** @description When true, a failure of this action does not fail the request. */
            optional?: boolean;
            /** @enum {string} */
            type: "fill";
            selector: string;
            value: string;
        };
        /** @description Body of POST /api/v1/client/recipes/{id}/generate (beyond the spec). */
        GenerateRecipeBody: {
            /** @description What to extract, in words; at most the capabilities' `limits.max_prompt_length` characters. */
            prompt: string;
            /**
             * Format: uri
             * @description The sample page, fetched directly over HTTP (no JavaScript, not billed); default the recipe's `sample_url`.
             */
            sample_url?: string;
            /**
             * Format: uuid
             * @description Instead of `sample_url`: a completed request of yours whose stored page is the sample (fetched
             *     by the platform's ordinary path, HTTP or browser).
             */
            sample_request_id?: string;
            /**
             * @description `auto` (default): the LLM when the deployment has one, the heuristic as the last attempt; `heuristic`; `llm`.
             * @enum {string}
             */
            method?: "auto" | "heuristic" | "llm";
            /** @description Activate the generated version at once (default false: it is saved as a draft version). */
            activate?: boolean;
        };
        /** @description One attempt of a generation. */
        GenerationAttempt: {
            /** Format: int32 */
            attempt: number;
            /** @enum {string} */
            method: "heuristic" | "llm";
            /**
             * @description `accepted`: this attempt's rules worked on the sample page and were saved.
             * @enum {string}
             */
            outcome: "accepted" | "rejected" | "error";
            /** @description Why it was rejected; for an accepted heuristic attempt, the fields it left out. */
            issues: components["schemas"]["FieldIssue"][];
        };
        /** @description Move the pointer over the element. */
        HoverAction: {
            /** @description When true, a failure of this action does not fail the request. */
            optional?: boolean;
            /** @enum {string} */
            type: "hover";
            selector: string;
        };
        /** @description The matched element's inner HTML. */
        HtmlSource: {
            /** @enum {string} */
            type: "html";
        };
        /** @description A dotted path (`offers.price`) into the page's JSON-LD, in the first object of `item_type` when given. Takes no selectors. */
        JsonLdSource: {
            /** @enum {string} */
            type: "json_ld";
            path: string;
            item_type?: string;
        };
        /** @description The first `[itemprop]` of that name (inside the collection item when in one): its `content`, `href`/`src`, or text. Takes no selectors. */
        MicrodataSource: {
            /** @enum {string} */
            type: "microdata";
            itemprop: string;
        };
        /** @description `<meta property="og:...">` content. Takes no selectors. */
        OpenGraphSource: {
            /** @enum {string} */
            type: "opengraph";
            property: string;
        };
        /** @description Press one key (`Enter`, `Tab`, `ArrowDown`, or a single character), optionally after focusing an element. */
        PressAction: {
            /** @description When true, a failure of this action does not fail the request. */
            optional?: boolean;
            /** @enum {string} */
            type: "press";
            key: string;
            selector?: string;
        };
        Project: {
            id: string;
            workspace_id: string;
            name: string;
            slug: string;
            /** Format: double */
            budget_cap_tokens: number | null;
            environments: components["schemas"]["ProjectEnvironment"][];
            created_at: string;
        };
        ProjectEnvironment: {
            id: string;
            /** @description `production` or `staging` (both created with the project). */
            name: string;
        };
        /** @description A project+environment key of the browser-workflow API. `api_key` is shown once, at issue. */
        ProjectKey: {
            id: string;
            project_id: string;
            environment_id: string;
            label: string;
            /** @description `wdrp_…`; absent on an idempotent replay (it is never stored). */
            api_key?: string;
            created_at: string;
        };
        ProjectPage: {
            items: components["schemas"]["Project"][];
            next_cursor: string | null;
        };
        /** @enum {string} */
        ProxyNetworkType: "datacenter" | "residential" | "premium";
        /** @enum {string} */
        ProxySetting: "random" | "off";
        ProxyTraffic: {
            /** Format: int32 */
            request_bytes: number;
            /** Format: int32 */
            response_bytes: number;
            /** Format: int32 */
            total_bytes: number;
            /**
             * Format: int32
             * @description Tokens charged for proxy traffic.
             */
            charged_tokens: number;
            /**
             * Format: int32
             * @description Requests charged for their traffic.
             */
            charged_jobs: number;
            /**
             * Format: int32
             * @description Requests whose traffic could not be measured: counted here, never as zero bytes.
             */
            measurement_unavailable_jobs: number;
            /** @description One entry per proxy type (datacenter, residential, premium), zeros included. */
            by_proxy_type: components["schemas"]["ProxyTrafficByType"][];
        };
        ProxyTrafficByType: {
            /** Format: int32 */
            request_bytes: number;
            /** Format: int32 */
            response_bytes: number;
            /** Format: int32 */
            total_bytes: number;
            /**
             * Format: int32
             * @description Tokens charged for proxy traffic.
             */
            charged_tokens: number;
            /**
             * Format: int32
             * @description Requests charged for their traffic.
             */
            charged_jobs: number;
            /**
             * Format: int32
             * @description Requests whose traffic could not be measured: counted here, never as zero bytes.
             */
            measurement_unavailable_jobs: number;
            proxy_type: components["schemas"]["ProxyNetworkType"];
        };
        /** @description GET /api/v1/data/usage: proxy traffic of the last 30 days. */
        ProxyTrafficUsage: {
            /** Format: date-time */
            period_start: string;
            /** Format: date-time */
            period_end: string;
            /** Format: int32 */
            period_days: number;
            proxy_traffic: components["schemas"]["ProxyTraffic"];
        };
        /** @description The one error body of the API. */
        PublicErrorBody: {
            /** @description Stable machine-readable code; each has exactly one HTTP status (docs/api.md, Errors). */
            code: components["schemas"]["PublicErrorCode"];
            message: string;
            request_id: string;
            details?: components["schemas"]["FieldIssue"][];
        };
        /**
         * @description The stable error codes of the public API, spelled out for the OpenAPI document (tsoa cannot read
         *     the kit's `ERROR_CODES` array); openapi-document.test.ts fails when the two lists differ.
         *     Each code has exactly one HTTP status: the kit's `ERROR_STATUS`, tabled in docs/api.md#errors.
         * @enum {string}
         */
        PublicErrorCode: "MALFORMED_REQUEST" | "VALIDATION_FAILED" | "UNAUTHENTICATED" | "FORBIDDEN" | "NOT_FOUND" | "METHOD_NOT_ALLOWED" | "IDEMPOTENCY_CONFLICT" | "CONFLICT" | "INSUFFICIENT_CREDITS" | "PROJECT_BUDGET_EXHAUSTED" | "BUDGET_BELOW_BASE_PRICE" | "PAYLOAD_TOO_LARGE" | "RESULT_EXPIRED" | "RESULT_NOT_READY" | "RATE_LIMITED" | "CONCURRENCY_LIMITED" | "PROXY_GEO_VERIFICATION_FAILED" | "DEPENDENCY_UNAVAILABLE" | "INTERNAL";
        /** @description SPEC: `POST /client/browser/workflow-versions/{versionId}/publish`. */
        PublishWorkflowVersionBody: {
            /**
             * Format: int32
             * @description The draft's current revision (409 CONFLICT when stale).
             */
            revision: number;
        };
        /** @description An extraction recipe. Its `fields` are those of its active version (while a draft, of its latest version). */
        Recipe: {
            /** Format: uuid */
            id: string;
            name: string;
            description: string;
            /** Format: uri */
            sample_url: string;
            fields: components["schemas"]["RecipeField"][];
            advanced_schema: boolean;
            /** @description `draft` until a version is activated, then `active`. */
            status: string;
            /**
             * Format: uuid
             * @description Null while no version is active.
             */
            active_version_id: string | null;
            auto_repair_enabled: boolean;
            /**
             * Format: date-time
             * @description When continuous repair was confirmed; null when it was not.
             */
            continuous_repair_confirmed_at: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
        };
        RecipeAutoRepair: {
            enabled: boolean;
            /** Format: int32 */
            automatic_repairs_per_window: number;
            /** Format: int32 */
            window_hours: number;
            continuous_repair_requires_confirmation: boolean;
        };
        RecipeBilling: {
            plan_id: string;
            charge_currency: string;
            charge_basis: string;
            /** Format: int32 */
            user_token_value_nano_usd: number;
            /** Format: int32 */
            markup_basis_points: number;
            /** Format: int32 */
            max_llm_charge_tokens: number;
            /** Format: int32 */
            preflight_required_balance_tokens: number;
            exact_charge_available_after_completion: boolean;
            failed_operations_charged: boolean;
            deterministic_execution_uses_standard_scrape_pricing: boolean;
        };
        /** @description Response of GET /api/v1/client/recipes/capabilities. */
        RecipeCapabilities: {
            enabled: boolean;
            /** Format: int32 */
            dsl_version: number;
            /** Format: int32 */
            generation_max_attempts: number;
            limits: components["schemas"]["RecipeLimits"];
            extraction_fields: components["schemas"]["RecipeExtractionFields"];
            auto_repair: components["schemas"]["RecipeAutoRepair"];
            billing: components["schemas"]["RecipeBilling"];
        };
        /** @description A recipe version's rules (DSL v1), at most `max_schema_bytes` as JSON and `max_rules` rules in all. */
        RecipeDefinition: {
            /**
             * Format: double
             * @description Only 1.
             */
            dsl_version: number;
            fields: components["schemas"]["RecipeFieldRule"][];
        };
        /** @description A recipe with all its versions, newest first, and its automatic repairs (the last 50, newest first). */
        RecipeDetail: {
            /** Format: uuid */
            id: string;
            name: string;
            description: string;
            /** Format: uri */
            sample_url: string;
            fields: components["schemas"]["RecipeField"][];
            advanced_schema: boolean;
            /** @description `draft` until a version is activated, then `active`. */
            status: string;
            /**
             * Format: uuid
             * @description Null while no version is active.
             */
            active_version_id: string | null;
            auto_repair_enabled: boolean;
            /**
             * Format: date-time
             * @description When continuous repair was confirmed; null when it was not.
             */
            continuous_repair_confirmed_at: string | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            updated_at: string;
            versions: components["schemas"]["RecipeVersion"][];
            repairs: components["schemas"]["RecipeRepair"][];
        };
        RecipeExtractionFields: {
            scalar_types: string[];
            scalar_source_types: string[];
            object_collections: boolean;
            /** Format: int32 */
            max_object_nesting_depth: number;
            collection_source_types: string[];
            collection_scope_selector: string;
        };
        RecipeField: {
            name: string;
            /** @description A scalar type (`string`, `number`, `integer`, `boolean`, `url`, `date`) or `object`. */
            type: string;
            required: boolean;
            multiple: boolean;
            description: string;
        };
        /**
         * @description One rule of DSL v1: a field of the output and how to find it. Scalar fields read `source`
         *     (default text) from the first of `selectors` that matches (all matches when `multiple`).
         *     `object` fields find their items with the CSS `scope` and read their own `fields` inside each
         *     (one object, or an array when `multiple`), nested at most `max_object_nesting_depth` deep.
         */
        RecipeFieldRule: {
            name: string;
            type: components["schemas"]["RecipeScalarType"] | "object";
            /** @description A required field that is not found fails the run. */
            required?: boolean;
            multiple?: boolean;
            description?: string;
            /** @description CSS selectors tried in order (at most `max_selectors_per_rule`, counting `scope`). */
            selectors?: string[];
            source?: components["schemas"]["ExtractionSource"];
            /** @description Object fields only: the CSS selector of each item. */
            scope?: string;
            /** @description Object fields only. */
            fields?: components["schemas"]["RecipeFieldRule"][];
        };
        /** @description Response of POST /api/v1/client/recipes/{id}/generate. */
        RecipeGeneration: {
            /** @description The saved version (`reason`: `generated:heuristic` or `generated:llm`). */
            version: components["schemas"]["RecipeVersion"];
            /** @enum {string} */
            method: "heuristic" | "llm";
            /** @description At most `generation_max_attempts`. */
            attempts: components["schemas"]["GenerationAttempt"][];
            /** @description The version's output on the sample page. */
            sample: {
                warnings: components["schemas"]["FieldIssue"][];
                data: components["schemas"]["Record_string.unknown_"];
            };
        };
        RecipeLimits: {
            /** Format: int32 */
            default_page_size: number;
            /** Format: int32 */
            max_page_size: number;
            /** Format: int32 */
            max_prompt_length: number;
            /** Format: int32 */
            max_schema_bytes: number;
            /** Format: int32 */
            max_rules: number;
            /** Format: int32 */
            max_selectors_per_rule: number;
        };
        /** @description Recipe list envelope of the client API. */
        RecipeList: {
            /** Format: int32 */
            total: number;
            /** Format: int32 */
            limit: number;
            /** Format: int32 */
            offset: number;
            has_more: boolean;
            items: components["schemas"]["Recipe"][];
        };
        /** @description One automatic repair of a recipe (beyond the spec): what triggered it and how it ended. */
        RecipeRepair: {
            /** Format: uuid */
            id: string;
            /**
             * @description `queued` until carried out, then `succeeded` (a new version) or `failed` (`error` says why).
             * @enum {string}
             */
            status: "queued" | "succeeded" | "failed";
            /** @description The failures on live pages that triggered it. */
            reason: string;
            /** Format: uuid */
            from_version_id: string;
            /**
             * Format: uuid
             * @description The version it saved (activated while the repaired version was still the active one).
             */
            version_id: string | null;
            /**
             * Format: uuid
             * @description The request whose failing page the repair was verified on.
             */
            trigger_request_id: string;
            /** @enum {string|null} */
            method: "heuristic" | "llm" | null;
            /** @description Beyond `automatic_repairs_per_window`, allowed by `continuous_repair_confirmed_at`. */
            continuous: boolean;
            error: {
                details?: components["schemas"]["FieldIssue"][];
                message: string;
                code: components["schemas"]["RepairErrorCode"];
            } | null;
            /**
             * Format: int32
             * @description Tokens charged for the repair's LLM calls (0 for the heuristic).
             */
            charged_tokens: number;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            finished_at: string | null;
        };
        /**
         * @description Scalar types of DSL v1; values found in the page are coerced to them.
         * @enum {string}
         */
        RecipeScalarType: "string" | "number" | "integer" | "boolean" | "url" | "date";
        /** @description A recipe version with its rules and field schema (data API listings include the active one). */
        RecipeVersion: {
            /** Format: uuid */
            id: string;
            /** Format: int32 */
            version: number;
            /** Format: int32 */
            dsl_version: number;
            fields: components["schemas"]["RecipeField"][];
            /** @description JSON Schema (2020-12) of a run's output. */
            schema: components["schemas"]["Record_string.unknown_"];
            definition: components["schemas"]["RecipeDefinition"];
            /** @description Why the version exists: `created` by the tenant, `generated:<method>`, `repaired:<method>`. */
            reason: string;
            /**
             * @description Who made it: the tenant, a generation, or an automatic repair.
             * @enum {string}
             */
            origin: "tenant" | "generation" | "repair";
            /** @description Repairs only: what was failing on live pages, e.g. `REQUIRED_FIELDS_MISSING in 3 of the last 10 runs (price)`. */
            repair_reason: string | null;
            /**
             * Format: uuid
             * @description Repairs only: the active version that was failing.
             */
            repaired_from_version_id: string | null;
            /** Format: date-time */
            created_at: string;
        };
        /** @description Construct a type with a set of properties K of type T */
        "Record_string.string_": {
            [key: string]: string;
        };
        /** @description Construct a type with a set of properties K of type T */
        "Record_string.unknown_": {
            [key: string]: unknown;
        };
        /**
         * @description Why a recipe repair failed (recipe-extractor, `domain/repairs/run-repair.ts`).
         * @enum {string}
         */
        RepairErrorCode: "REPAIR_FAILED" | "NOTHING_TO_REPAIR" | "PAGE_UNAVAILABLE" | "RECIPE_VERSION_GONE";
        /** @description Response of GET /api/v1/data/requests/{id}. */
        RequestDetail: {
            /** Format: uuid */
            id: string;
            /** Format: uuid */
            batch_id: string | null;
            /**
             * Format: uri
             * @description Target origin only.
             */
            url: string;
            /** @description For structured extraction requests, the extraction-run status. */
            status: components["schemas"]["DataVisibleStatus"];
            cached: boolean;
            protected: boolean;
            /** Format: int32 */
            pricing_version: number;
            /** Format: int32 */
            base_tokens: number;
            /** Format: int32 */
            protected_tokens: number;
            /** Format: int32 */
            captcha_tokens: number;
            /** @enum {string|null} */
            captcha_type: "captcha" | null;
            token_state: components["schemas"]["DataTokenState"];
            /** @description The submitted options, without secrets: header and cookie values are reduced to their names. */
            request: components["schemas"]["Record_string.unknown_"];
            /** @description What a failed request that opted in left for debugging; `{}` when nothing was kept. */
            debug_artifacts: components["schemas"]["DebugArtifacts"];
            /** @description Set on failed and cancelled requests: `{code, message}` and where it failed (e.g. `stage`, `status_code`). */
            error: components["schemas"]["Record_string.unknown_"] | null;
            /** @description Set on failed and cancelled requests: `{code, message}` meant for the tenant. */
            user_error: components["schemas"]["Record_string.unknown_"] | null;
            /** @description Set on completed requests: `{stage, status_code, content_type, bytes, redirects, elapsed_ms}`. */
            result_meta: components["schemas"]["Record_string.unknown_"] | null;
            /**
             * @description Redacted transport marker: `platform` or null.
             * @enum {string|null}
             */
            proxy_used: "platform" | null;
            /** Format: date-time */
            created_at: string;
            /** Format: date-time */
            started_at: string | null;
            /** Format: date-time */
            finished_at: string | null;
            /** Format: date-time */
            result_expires_at: string | null;
            /**
             * Format: uuid
             * @description Present on a request created by a retry: the failed source request, kept unchanged.
             */
            retried_from_id?: string;
            /**
             * Format: uuid
             * @description Extraction requests created by a retry: the source request's (failed) extraction run.
             */
            retried_from_run_id?: string;
            /**
             * @description Extraction requests only.
             * @enum {string}
             */
            result_kind?: "extraction";
            /** @description Extraction requests only: the page fetch's status (`status` is the extraction run's). */
            page_status?: components["schemas"]["DataJobStatus"];
            /** @description Extraction requests only: the page fetch's `error` (`error` is the run's). */
            page_error?: components["schemas"]["Record_string.unknown_"] | null;
            /** @description Extraction requests only: the page fetch's `user_error`. */
            page_user_error?: components["schemas"]["Record_string.unknown_"] | null;
            /** @description Extraction requests only. */
            extraction?: components["schemas"]["ExtractionState"];
            /** @description Runs of a browser workflow only: what the run belongs to. */
            workflow_run?: components["schemas"]["WorkflowRunOrigin"];
        };
        /**
         * @description The code a failed or cancelled request ends with (REQUEST_ERROR_CODES in `@wdr/contracts`: the HTTP
         *     stage's, the browser stage's, the proxy route's and the orchestrator's own), or `FAILED` for a failure
         *     that recorded none.
         * @enum {string}
         */
        RequestErrorCode: "TARGET_BLOCKED" | "TARGET_UNREACHABLE" | "TARGET_TIMEOUT" | "TARGET_SERVER_ERROR" | "TARGET_TOO_LARGE" | "WAIT_FOR_SELECTOR_TIMEOUT" | "WAIT_FOR_TEXT_TIMEOUT" | "INVALID_SELECTOR" | "BROWSER_ACTION_FAILED" | "PROTECTION_NOT_PASSED" | "BROWSER_CRASHED" | "BROWSER_UNAVAILABLE" | "CAPTCHA_NOT_SOLVED" | "BUDGET_EXHAUSTED" | "INSUFFICIENT_CREDITS" | "RENDER_FAILED" | "TOO_MANY_REDIRECTS" | "EXIT_FAILED" | "PROXY_UNAVAILABLE" | "PROXY_GEO_VERIFICATION_FAILED" | "TARGET_EXPIRED" | "INVALID_OPTIONS" | "CANCELLED" | "FAILED";
        /**
         * @description One entry of a request's append-only event history; the same object is the `data` of a
         *     Server-Sent Event. Payloads are provider-neutral: no vendor names, no internal hosts, no target
         *     paths or queries.
         */
        RequestEvent: {
            /**
             * Format: int32
             * @description Per-request sequence number, from 1 upwards without gaps; the SSE `id`, usable as `Last-Event-ID`.
             */
            id: number;
            /**
             * @description What happened: `request.accepted`, `request.running`, `request.completed`, `request.failed`,
             *     `request.cancelled`, `tokens.settled`, `tokens.refunded` (more kinds may be added).
             */
            type: string;
            /** @description The request's status right after this event. */
            status: components["schemas"]["DataVisibleStatus"];
            /** Format: date-time */
            created_at: string;
            /** @description Kind-specific details, e.g. `{ error: { code, message } }` or `{ charged_tokens }`. */
            data: components["schemas"]["Record_string.unknown_"];
        };
        /** @description GET /api/v1/data/requests/{id}/events. */
        RequestEventList: {
            /** @description Ascending creation order. */
            data: components["schemas"]["RequestEvent"][];
        };
        /** @enum {string} */
        RequestMode: "direct" | "auto" | "browser" | "http" | "residential" | "residential_browser";
        /** @description GET /api/v1/data/requests: the tenant's requests, newest first. */
        RequestPage: {
            data: components["schemas"]["RequestDetail"][];
            meta: components["schemas"]["RequestPageMeta"];
        };
        /** @description `meta` of a cursor page of requests. */
        RequestPageMeta: {
            /**
             * @description Opaque base64url cursor: send it back unchanged as `cursor` to read the next page. Null on the
             *     last page.
             */
            next_cursor: string | null;
            /** @description True when a next page exists (then `next_cursor` is set). */
            has_more: boolean;
            /**
             * Format: int32
             * @description The page size applied.
             */
            limit: number;
        };
        /** @enum {string} */
        ResourcePolicy: "adaptive" | "compatible";
        /** @description Response of POST /api/v1/data/requests/{id}/retry. */
        RetrySubmissionResponse: {
            /** Format: uuid */
            id: string;
            /** @description Target origin only. */
            url?: string;
            /**
             * @description The request's status; for an extraction request (`result_kind: extraction`) its readiness, as
             *     in the detail: `waiting_for_page` until the page ended, then the extraction's status
             *     (`page_status` is the page's).
             */
            status: components["schemas"]["DataVisibleStatus"];
            cached: boolean;
            protected: boolean;
            /** Format: int32 */
            pricing_version: number;
            route_mode: components["schemas"]["RouteMode"];
            proxy_type?: components["schemas"]["ProxyNetworkType"];
            /** Format: int32 */
            base_tokens: number;
            /** Format: int32 */
            protected_tokens: number;
            /** Format: int32 */
            captcha_tokens: number;
            quote?: components["schemas"]["Record_string.unknown_"] | null;
            /** Format: date-time */
            created_at: string;
            /** Format: int32 */
            charged_tokens: number;
            idempotent_replay: boolean;
            /** @enum {string} */
            result_kind?: "extraction";
            page_status?: string;
            /** @description Runs of a browser workflow only: what the run belongs to. */
            workflow_run?: components["schemas"]["WorkflowRunOrigin"];
            /**
             * Format: uuid
             * @description The failed source request, kept unchanged for audit.
             */
            retried_from_id: string;
            /**
             * Format: uuid
             * @description Present when an extraction request was retried.
             */
            retried_from_run_id?: string;
        };
        RotateWebhookSecretBody: {
            /**
             * Format: int32
             * @description How long the previous secret keeps signing beside the new one, seconds (default a day; 0 revokes it at once).
             */
            previous_valid_seconds?: number;
        };
        RouteMode: components["schemas"]["RequestMode"] | "mixed";
        /** @description Scroll an element into view, the page to `top` or `bottom` (the default), or by `y` pixels; at most one of the three. */
        ScrollAction: {
            /** @description When true, a failure of this action does not fail the request. */
            optional?: boolean;
            /** @enum {string} */
            type: "scroll";
            selector?: string;
            /** @enum {string} */
            to?: "top" | "bottom";
            /** Format: int32 */
            y?: number;
        };
        /** @description Choose the options of a `<select>` with these values. */
        SelectAction: {
            /** @description When true, a failure of this action does not fail the request. */
            optional?: boolean;
            /** @enum {string} */
            type: "select";
            selector: string;
            values: string[];
        };
        /**
         * @description One transfer on the tenant's account. `type`: `reservation` (tokens held at admission),
         *     `step_hold` (more held during execution), `settlement` (a hold resolved: the charged part posted,
         *     the rest released), `refund` (a hold released in full), `deferred_charge` (CAPTCHA or traffic
         *     above what was held), `top_up`, `grant`, `correction`; with credit leases on: `lease_grant` (a
         *     block of tokens set aside to admit requests from), `lease_use` (a request's charge taken from
         *     it: balance effect 0, the grant already took it), `lease_return` (what the lease did not use).
         */
        StatementItem: {
            transfer_id: string;
            /** Format: date-time */
            created_at: string;
            type: string;
            /**
             * @description `pending` (held), `post_pending` (hold resolved with a charge), `void_pending` (hold released), `posted`.
             * @enum {string}
             */
            kind: "pending" | "post_pending" | "void_pending" | "posted";
            /** Format: int32 */
            amount_tokens: number;
            /**
             * Format: int32
             * @description What it did to the available balance (negative: less to spend). The effects of all items add
             *     up to `balance_tokens`.
             */
            balance_effect_tokens: number;
            /** @description The request it belongs to, if any. */
            request_id: string | null;
            /** @description Operator's note on top-ups, grants and corrections. */
            memo: string | null;
        };
        /** @description GET /api/v1/data/statement: newest first, cursor-paged. */
        StatementPage: {
            items: components["schemas"]["StatementItem"][];
            /** @description Opaque cursor for the next (older) page; null on the last page. */
            next_cursor: string | null;
        };
        /** @description Response of create and retry. */
        SubmissionResponse: {
            /** Format: uuid */
            id: string;
            /** @description Target origin only. */
            url?: string;
            /**
             * @description The request's status; for an extraction request (`result_kind: extraction`) its readiness, as
             *     in the detail: `waiting_for_page` until the page ended, then the extraction's status
             *     (`page_status` is the page's).
             */
            status: components["schemas"]["DataVisibleStatus"];
            cached: boolean;
            protected: boolean;
            /** Format: int32 */
            pricing_version: number;
            route_mode: components["schemas"]["RouteMode"];
            proxy_type?: components["schemas"]["ProxyNetworkType"];
            /** Format: int32 */
            base_tokens: number;
            /** Format: int32 */
            protected_tokens: number;
            /** Format: int32 */
            captcha_tokens: number;
            quote?: components["schemas"]["Record_string.unknown_"] | null;
            /** Format: date-time */
            created_at: string;
            /** Format: int32 */
            charged_tokens: number;
            idempotent_replay: boolean;
            /** @enum {string} */
            result_kind?: "extraction";
            page_status?: string;
            /** @description Runs of a browser workflow only: what the run belongs to. */
            workflow_run?: components["schemas"]["WorkflowRunOrigin"];
        };
        /**
         * @description One of the tenant's data API keys as the cabinet lists it: never the key itself (it is stored
         *     only as a peppered HMAC and shown once, when issued). Last use is not tracked.
         */
        TenantApiKey: {
            id: string;
            /** @description The key's lookup prefix: a key reads `wdr_<prefix>_<secret>`, so the tenant can tell which key this is. */
            prefix: string;
            label: string;
            created_at: string;
            /** @description Null: the key does not expire. */
            expires_at: string | null;
            /** @description When the key was revoked (by the tenant or an operator); null while it was not. */
            revoked_at: string | null;
            /** @description `expired`: past `expires_at` and not revoked. */
            state: components["schemas"]["TenantApiKeyState"];
        };
        /** @description Response of GET /api/v1/client/api-keys. */
        TenantApiKeyList: {
            items: components["schemas"]["TenantApiKey"][];
        };
        /** @enum {string} */
        TenantApiKeyState: "active" | "revoked" | "expired";
        /** @description The matched element's text (whitespace collapsed). */
        TextSource: {
            /** @enum {string} */
            type: "text";
        };
        /** @description GET /api/v1/data/balance. */
        TokenBalance: {
            /**
             * Format: int32
             * @description Tokens available for new requests now.
             */
            balance_tokens: number;
            /**
             * Format: int32
             * @description Tokens held by requests in flight (released or charged when they finish), including what the
             *     tenant's open credit leases still hold for requests to come (returned when the lease expires).
             */
            reserved_tokens: number;
            plan_id: string;
            /**
             * Format: int32
             * @description Below this balance a `billing.balance_low` notification is sent.
             */
            low_balance_threshold_tokens: number;
        };
        /** @description Focus the element and type the text key by key. */
        TypeAction: {
            /** @description When true, a failure of this action does not fail the request. */
            optional?: boolean;
            /** @enum {string} */
            type: "type";
            selector: string;
            text: string;
            /**
             * Format: int32
             * @description Delay between keys.
             */
            delay_ms?: number;
        };
        /** @description Body of PATCH /api/v1/client/recipes/{id}: only the fields given change. */
        UpdateRecipeBody: {
            name?: string;
            description?: string;
            /** Format: uri */
            sample_url?: string;
            advanced_schema?: boolean;
            auto_repair_enabled?: boolean;
            /** @description true records now as `continuous_repair_confirmed_at`; false clears it. */
            continuous_repair_confirmed?: boolean;
        };
        UpdateWebhookBody: {
            url?: string;
            event_types?: components["schemas"]["WebhookEventType"][];
            description?: string | null;
            /**
             * @description `true` re-enables a disabled endpoint (its pending deliveries resume).
             * @enum {boolean}
             */
            enabled?: true;
        };
        UpdateWorkflowVersionBody: {
            /**
             * Format: int32
             * @description The draft's current revision (409 CONFLICT when stale).
             */
            revision: number;
            definition: components["schemas"]["WorkflowDefinition"];
        };
        /** @description Wait a fixed time. */
        WaitAction: {
            /** @description When true, a failure of this action does not fail the request. */
            optional?: boolean;
            /** @enum {string} */
            type: "wait";
            /** Format: int32 */
            ms: number;
        };
        /** @description Wait until an element matching `selector` exists (or is visible). */
        WaitForSelectorAction: {
            /** @description When true, a failure of this action does not fail the request. */
            optional?: boolean;
            /** @enum {string} */
            type: "wait_for_selector";
            selector: string;
            /**
             * Format: int32
             * @description Default and upper bound: min(timeout_ms, 30000).
             */
            timeout_ms?: number;
            visible?: boolean;
        };
        /** @description Wait until the page's text contains `text`. */
        WaitForTextAction: {
            /** @description When true, a failure of this action does not fail the request. */
            optional?: boolean;
            /** @enum {string} */
            type: "wait_for_text";
            text: string;
            /**
             * Format: int32
             * @description Default and upper bound: min(timeout_ms, 30000).
             */
            timeout_ms?: number;
        };
        /** @description One delivery attempt, redacted: no payload, no secret, no URL beyond origins. */
        WebhookDelivery: {
            id: string;
            /** @description The `webhook-id` header: stable across the attempts of one event to one endpoint. */
            message_id: string;
            event_type: string;
            /** Format: double */
            attempt: number;
            /** @enum {string} */
            outcome: "delivered" | "failed";
            /** Format: double */
            status_code: number | null;
            /** Format: double */
            latency_ms: number;
            /** @description The start of the receiver's answer (at most 256 characters), URLs reduced to origins, tokens masked. */
            response_excerpt: string | null;
            /** @description Transport failure class: `timeout`, `connection_refused`, `connection_reset`, `dns`, `target_blocked`, `redirect`, `tls`, `network`. */
            error: string | null;
            created_at: string;
        };
        WebhookDeliveryPage: {
            items: components["schemas"]["WebhookDelivery"][];
            next_cursor: string | null;
        };
        /** @description A webhook endpoint, redacted: the URL's origin only, never its path, query or secret. */
        WebhookEndpoint: {
            id: string;
            project_id: string | null;
            environment_id: string | null;
            url_origin: string;
            event_types: components["schemas"]["WebhookEventType"][];
            description: string | null;
            /** @enum {string} */
            status: "enabled" | "disabled";
            /** @enum {string|null} */
            disabled_reason: "manual" | "gone" | "sustained_failure" | null;
            disabled_at: string | null;
            created_at: string;
            updated_at: string;
        };
        WebhookEndpointPage: {
            items: components["schemas"]["WebhookEndpoint"][];
            next_cursor: string | null;
        };
        /** @description The answer to a creation or a rotation: the `whsec_` signing secret, shown this once. */
        WebhookEndpointWithSecret: {
            endpoint: components["schemas"]["WebhookEndpoint"];
            /** @description The `whsec_` signing secret, in this answer only: absent when the answer is an Idempotency-Key replay (rotate for a new one). */
            secret?: string;
        };
        /** @enum {string} */
        WebhookEventType: "request.accepted" | "request.running" | "request.completed" | "request.failed" | "request.cancelled" | "tokens.settled" | "tokens.refunded" | "extraction.completed" | "extraction.failed" | "billing.balance_low" | "billing.balance_exhausted" | "webhook.endpoint_disabled" | "batch.completed";
        /** @description A message (one event for one endpoint) and where its schedule stands (the answer to a redelivery). */
        WebhookMessage: {
            /** @description The `webhook-id` header of its deliveries (`msg_…`). */
            id: string;
            event_type: string;
            /** @enum {string} */
            status: "pending" | "delivered" | "failed";
            /** Format: int32 */
            attempts: number;
            /** Format: date-time */
            next_attempt_at: string | null;
            /** Format: date-time */
            delivered_at: string | null;
            /** Format: date-time */
            created_at: string;
        };
        Workflow: {
            id: string;
            project_id: string;
            name: string;
            /**
             * Format: double
             * @description Incremented by each activation; activate names the current one (optimistic concurrency).
             */
            workflow_version: number;
            active_version_id: string | null;
            created_at: string;
            updated_at: string;
        };
        /**
         * @description A browser request template: the submission body of `POST /api/v1/data/requests` (same rules),
         *     rendered in the browser (`mode` absent, `browser` or `residential_browser`; `javascript` not false).
         */
        WorkflowDefinition: components["schemas"]["CreateDataRequestBody"];
        WorkflowDetail: {
            id: string;
            project_id: string;
            name: string;
            /**
             * Format: double
             * @description Incremented by each activation; activate names the current one (optimistic concurrency).
             */
            workflow_version: number;
            active_version_id: string | null;
            created_at: string;
            updated_at: string;
            /** @description Newest first. */
            versions: components["schemas"]["WorkflowVersion"][];
        };
        WorkflowPage: {
            items: components["schemas"]["Workflow"][];
            next_cursor: string | null;
        };
        /** @description A request made by running a browser workflow (beyond the spec): its project, environment, workflow and version. */
        WorkflowRunOrigin: {
            /** Format: uuid */
            project_id: string;
            /** Format: uuid */
            environment_id: string;
            /** Format: uuid */
            workflow_id: string;
            /** Format: uuid */
            workflow_version_id: string;
        };
        WorkflowVersion: {
            id: string;
            workflow_id: string;
            /**
             * Format: double
             * @description 1, 2, … in the order versions were created.
             */
            number: number;
            status: components["schemas"]["WorkflowVersionStatus"];
            /**
             * Format: double
             * @description Incremented by each edit of the draft; publish names the current one.
             */
            revision: number;
            /** @description True for the workflow's active version. */
            active: boolean;
            definition: components["schemas"]["WorkflowDefinition"];
            created_at: string;
            updated_at: string;
            published_at: string | null;
        };
        /** @enum {string} */
        WorkflowVersionStatus: "draft" | "published";
        Workspace: {
            id: string;
            name: string;
            created_at: string;
        };
        WorkspaceMember: {
            /** Format: double */
            user_id: number;
            role: components["schemas"]["WorkspaceRole"];
            created_at: string;
            updated_at: string;
        };
        WorkspaceMemberPage: {
            items: components["schemas"]["WorkspaceMember"][];
            next_cursor: string | null;
        };
        WorkspacePage: {
            items: components["schemas"]["Workspace"][];
            next_cursor: string | null;
        };
        /** @enum {string} */
        WorkspaceRole: "owner" | "admin" | "member";
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    ReadWorkflowRun: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                projectId: string;
                environmentId: string;
                runId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RequestDetail"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid or revoked project+environment key (a tenant key is not one) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: not the key's project and environment, or no such webhook, workflow or run */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: fetch-orchestrator is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListWebhookEndpoints: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page. */
                cursor?: string;
                /** @description 1..100, default 50. */
                limit?: number;
            };
            header?: never;
            path: {
                projectId: string;
                environmentId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointPage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid or revoked project+environment key (a tenant key is not one) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: not the key's project and environment, or no such webhook, workflow or run */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: bad limit or cursor */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page. */
                cursor?: string;
                /** @description 1..100, default 50. */
                limit?: number;
            };
            header?: never;
            path: {
                projectId: string;
                environmentId: string;
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryPage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid or revoked project+environment key (a tenant key is not one) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: not the key's project and environment, or no such webhook, workflow or run */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: bad limit or cursor */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    RunWorkflow: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. The same key for the same workflow in this environment answers the original run (even after another version was activated). */
                "Idempotency-Key"?: string;
            };
            path: {
                projectId: string;
                environmentId: string;
                workflowId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SubmissionResponse"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid or revoked project+environment key (a tenant key is not one) */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INSUFFICIENT_CREDITS (the tenant's balance) or PROJECT_BUDGET_EXHAUSTED (the project's budget cap) */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: not the key's project and environment, or no such webhook, workflow or run */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description CONFLICT: the workflow has no active version; or IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the Idempotency-Key is not valid; or BUDGET_BELOW_BASE_PRICE: the definition's max_credits_per_request is below the base price */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this run needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListClientApiKeys: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TenantApiKeyList"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    RevokeClientApiKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                keyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such key of this tenant */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CreateCabinetBatch: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200; the same key with an identical body replays the first answer for free. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "jobs": [
                 *         {
                 *           "url": "https://example.com",
                 *           "mode": "http"
                 *         },
                 *         {
                 *           "url": "https://example.org",
                 *           "mode": "http"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["CreateBatchBody"];
            };
        };
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CabinetBatchResponse"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INSUFFICIENT_CREDITS: the balance cannot reserve every job; nothing is created */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with a different body */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED (details name jobs.<index>.<field>), BUDGET_BELOW_BASE_PRICE */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After) */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetBrowserProject: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                projectId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Project"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListBrowserProjectKeys: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                projectId: string;
                environmentId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        items: components["schemas"]["ProjectKey"][];
                    };
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project or environment */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    IssueBrowserProjectKey: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                projectId: string;
                environmentId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "label": "ci-pipeline"
                 *     }
                 */
                "application/json": components["schemas"]["CreateProjectKeyBody"];
            };
        };
        responses: {
            /** @description Issued */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProjectKey"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project or environment */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the label or the Idempotency-Key is not valid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    RevokeBrowserProjectKey: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                projectId: string;
                environmentId: string;
                keyId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Revoked */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project, environment or key */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListBrowserWebhooks: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page. */
                cursor?: string;
                /** @description 1..100, default 50. */
                limit?: number;
            };
            header?: never;
            path: {
                projectId: string;
                environmentId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointPage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project or environment */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: bad limit or cursor */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CreateBrowserWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. The same key with the same write replays its answer (a replayed create or rotation omits `secret`). */
                "Idempotency-Key"?: string;
            };
            path: {
                projectId: string;
                environmentId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "url": "https://hooks.example.com/wdr",
                 *       "event_types": [
                 *         "request.completed",
                 *         "request.failed"
                 *       ],
                 *       "description": "Order pipeline"
                 *     }
                 */
                "application/json": components["schemas"]["CreateWebhookBody"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointWithSecret"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project or environment */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the body is not valid, or the URL is refused (private, loopback, link-local or metadata address) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetBrowserWebhook: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                projectId: string;
                environmentId: string;
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project, environment or webhook */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    DeleteBrowserWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. The same key with the same write replays its answer (a replayed create or rotation omits `secret`). */
                "Idempotency-Key"?: string;
            };
            path: {
                projectId: string;
                environmentId: string;
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project, environment or webhook */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    UpdateBrowserWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. The same key with the same write replays its answer (a replayed create or rotation omits `secret`). */
                "Idempotency-Key"?: string;
            };
            path: {
                projectId: string;
                environmentId: string;
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "event_types": [
                 *         "request.completed"
                 *       ],
                 *       "enabled": true
                 *     }
                 */
                "application/json": components["schemas"]["UpdateWebhookBody"];
            };
        };
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project, environment or webhook */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the body is not valid, or the URL is refused (private, loopback, link-local or metadata address) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListBrowserWebhookDeliveries: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page. */
                cursor?: string;
                /** @description 1..100, default 50. */
                limit?: number;
            };
            header?: never;
            path: {
                projectId: string;
                environmentId: string;
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryPage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project, environment or webhook */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: bad limit or cursor */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    RedeliverBrowserWebhookMessage: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                projectId: string;
                environmentId: string;
                webhookId: string;
                /** @description The message's `webhook-id` (`msg_…`). */
                messageId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookMessage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project, environment, webhook or message */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description CONFLICT: the message is being delivered right now */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    DisableBrowserWebhook: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. The same key with the same write replays its answer (a replayed create or rotation omits `secret`). */
                "Idempotency-Key"?: string;
            };
            path: {
                projectId: string;
                environmentId: string;
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project, environment or webhook */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    RotateBrowserWebhookSecret: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. The same key with the same write replays its answer (a replayed create or rotation omits `secret`). */
                "Idempotency-Key"?: string;
            };
            path: {
                projectId: string;
                environmentId: string;
                webhookId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "previous_valid_seconds": 3600
                 *     }
                 */
                "application/json": components["schemas"]["RotateWebhookSecretBody"];
            };
        };
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointWithSecret"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project, environment or webhook */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: previous_valid_seconds is not an integer 0..604800 */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: webhook-dispatcher is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListBrowserWorkflows: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page. */
                cursor?: string;
                /** @description 1..100, default 50. */
                limit?: number;
            };
            header?: never;
            path: {
                projectId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkflowPage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: bad limit or cursor */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CreateBrowserWorkflow: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                projectId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Catalog snapshot"
                 *     }
                 */
                "application/json": components["schemas"]["CreateWorkflowBody"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Workflow"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such project */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the name or the Idempotency-Key is not valid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    UpdateBrowserWorkflowVersion: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                versionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "revision": 1,
                 *       "definition": {
                 *         "url": "https://shop.example.com/catalog",
                 *         "mode": "residential_browser",
                 *         "geo_country": "DE",
                 *         "wait_for_selector": "#products",
                 *         "result_text_selector": "#products"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["UpdateWorkflowVersionBody"];
            };
        };
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkflowVersion"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such version */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description CONFLICT: the revision is stale or the version is published; or IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the definition breaks a submission rule (`details` fields under `definition.`), or the revision or Idempotency-Key is not valid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    PublishBrowserWorkflowVersion: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                versionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "revision": 2
                 *     }
                 */
                "application/json": components["schemas"]["PublishWorkflowVersionBody"];
            };
        };
        responses: {
            /** @description Published (no body) */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such version */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description CONFLICT: the revision is stale or the version is already published; or IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: revision is not an integer, or the Idempotency-Key is not valid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetBrowserWorkflow: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                workflowId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkflowDetail"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such workflow */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CreateBrowserWorkflowVersion: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                workflowId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "definition": {
                 *         "url": "https://shop.example.com/catalog",
                 *         "mode": "residential_browser",
                 *         "geo_country": "DE",
                 *         "wait_for_selector": "#products",
                 *         "result_text_selector": "#products"
                 *       }
                 *     }
                 */
                "application/json": components["schemas"]["CreateWorkflowVersionBody"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkflowVersion"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such workflow */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the definition breaks a submission rule (`details` fields under `definition.`), or the Idempotency-Key is not valid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ActivateBrowserWorkflowVersion: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                workflowId: string;
                versionId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "workflow_version": 2
                 *     }
                 */
                "application/json": components["schemas"]["ActivateWorkflowVersionBody"];
            };
        };
        responses: {
            /** @description Activated (no body) */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such workflow or version */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description CONFLICT: workflow_version is stale or the version is a draft; or IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: workflow_version is not an integer, or the Idempotency-Key is not valid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListBrowserWorkspaces: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page. */
                cursor?: string;
                /** @description 1..100, default 50. */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkspacePage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: bad limit or cursor */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CreateBrowserWorkspace: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Acme data team",
                 *       "owner_user_id": 42
                 *     }
                 */
                "application/json": components["schemas"]["CreateWorkspaceBody"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Workspace"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the body or the Idempotency-Key is not valid (one `details` entry per problem) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListBrowserMembers: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page. */
                cursor?: string;
                /** @description 1..100, default 50. */
                limit?: number;
            };
            header?: never;
            path: {
                workspaceId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WorkspaceMemberPage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such workspace */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: bad limit or cursor */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    PutBrowserMember: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                workspaceId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "user_id": 43,
                 *       "role": "member"
                 *     }
                 */
                "application/json": components["schemas"]["AddMemberBody"];
            };
        };
        responses: {
            /** @description Added or updated (no body) */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such workspace */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description CONFLICT: the change would demote the last owner; or IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: user_id, role or the Idempotency-Key is not valid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    RemoveBrowserMember: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                workspaceId: string;
                userId: number;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Removed */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such workspace or member */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description CONFLICT: the member is the last owner; or IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: userId is not an integer, or the Idempotency-Key is not valid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListBrowserProjects: {
        parameters: {
            query?: {
                /** @description `next_cursor` of the previous page. */
                cursor?: string;
                /** @description 1..100, default 50. */
                limit?: number;
            };
            header?: never;
            path: {
                workspaceId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProjectPage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such workspace */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: bad limit or cursor */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CreateBrowserProject: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                workspaceId: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Catalog monitor",
                 *       "slug": "catalog-monitor",
                 *       "budget_cap_tokens": 5000
                 *     }
                 */
                "application/json": components["schemas"]["CreateProjectBody"];
            };
        };
        responses: {
            /** @description Created (no body; Location names the project) */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such workspace */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description CONFLICT: the slug is taken in the workspace; or IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: name, slug, budget_cap_tokens or the Idempotency-Key is not valid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListClientRecipes: {
        parameters: {
            query?: {
                /** @description Page size, 1..100. */
                limit?: number;
                /** @description Items to skip, >= 0. */
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecipeList"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: limit or offset out of range */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: recipe-extractor (or, for capabilities and generation, billing-ledger) is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CreateClientRecipe: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Product pages",
                 *       "sample_url": "https://shop.example/p/trail-shoe-x",
                 *       "definition": {
                 *         "dsl_version": 1,
                 *         "fields": [
                 *           {
                 *             "name": "title",
                 *             "type": "string",
                 *             "required": true,
                 *             "selectors": [
                 *               "h1.title"
                 *             ]
                 *           },
                 *           {
                 *             "name": "price",
                 *             "type": "number",
                 *             "required": true,
                 *             "selectors": [
                 *               ".price"
                 *             ]
                 *           }
                 *         ]
                 *       },
                 *       "activate": true
                 *     }
                 */
                "application/json": components["schemas"]["CreateRecipeBody"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecipeDetail"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: a field, a rule of the definition or a capability limit, each named in details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: recipe-extractor (or, for capabilities and generation, billing-ledger) is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetRecipeCapabilities: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecipeCapabilities"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: recipe-extractor (or, for capabilities and generation, billing-ledger) is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetClientRecipe: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecipeDetail"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such recipe */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the id is not a uuid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: recipe-extractor (or, for capabilities and generation, billing-ledger) is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    DeleteClientRecipe: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such recipe */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: recipe-extractor (or, for capabilities and generation, billing-ledger) is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    UpdateClientRecipe: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "name": "Product pages (v2)",
                 *       "auto_repair_enabled": true
                 *     }
                 */
                "application/json": components["schemas"]["UpdateRecipeBody"];
            };
        };
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecipeDetail"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such recipe */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: a field, a rule of the definition or a capability limit, each named in details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: recipe-extractor (or, for capabilities and generation, billing-ledger) is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GenerateClientRecipeVersion: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200; a replay answers the saved generation without generating again. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "prompt": "the product's title and price",
                 *       "sample_url": "https://shop.example/p/trail-shoe-x",
                 *       "method": "auto",
                 *       "activate": true
                 *     }
                 */
                "application/json": components["schemas"]["GenerateRecipeBody"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecipeGeneration"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INSUFFICIENT_CREDITS: the balance does not cover the LLM preflight */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such recipe */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the body, the sample page could not be read, or no attempt worked (details per attempt) */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: recipe-extractor (or, for capabilities and generation, billing-ledger) is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CreateClientRecipeVersion: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "definition": {
                 *         "dsl_version": 1,
                 *         "fields": [
                 *           {
                 *             "name": "title",
                 *             "type": "string",
                 *             "required": true,
                 *             "selectors": [
                 *               "h1.title"
                 *             ]
                 *           },
                 *           {
                 *             "name": "price",
                 *             "type": "number",
                 *             "required": true,
                 *             "selectors": [
                 *               ".price"
                 *             ]
                 *           }
                 *         ]
                 *       },
                 *       "activate": true
                 *     }
                 */
                "application/json": components["schemas"]["CreateRecipeVersionBody"];
            };
        };
        responses: {
            /** @description Created */
            201: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecipeVersion"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such recipe */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: a field, a rule of the definition or a capability limit, each named in details */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: recipe-extractor (or, for capabilities and generation, billing-ledger) is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ActivateClientRecipeVersion: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
                versionId: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RecipeDetail"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such recipe or version */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with another write */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: recipe-extractor (or, for capabilities and generation, billing-ledger) is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CreateClientRequest: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. When omitted the server generates one, so every call creates a new request. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateDataRequestBody"];
            };
        };
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CabinetRequestResponse"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, invalid, expired or revoked bearer token */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INSUFFICIENT_CREDITS: the balance cannot cover the base price; nothing is created */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with a different body */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: body larger than 1 MB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED (one `details` entry per problem) or BUDGET_BELOW_BASE_PRICE */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetBalance: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["TokenBalance"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: the ledger or the database is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CreateDataBatch: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200; the same key with an identical body replays the first answer for free. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                /**
                 * @example {
                 *       "jobs": [
                 *         {
                 *           "url": "https://example.com",
                 *           "mode": "http"
                 *         },
                 *         {
                 *           "url": "https://example.org",
                 *           "mode": "http"
                 *         }
                 *       ]
                 *     }
                 */
                "application/json": components["schemas"]["CreateBatchBody"];
            };
        };
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["CabinetBatchResponse"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INSUFFICIENT_CREDITS: the balance cannot reserve every job; nothing is created */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with a different body */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED (details name jobs.<index>.<field>), BUDGET_BELOW_BASE_PRICE */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After) */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetDataBatch: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Batch"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such batch (or another tenant's) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the id is not a uuid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListDataRecipes: {
        parameters: {
            query?: {
                /** @description Page size, 1..100. */
                limit?: number;
                /** @description Items to skip, 0..10000. */
                offset?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["DataRecipeList"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: bad limit or offset */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListRequests: {
        parameters: {
            query?: {
                /** @description Opaque base64url cursor from a previous page's `meta.next_cursor`. */
                cursor?: string;
                /** @description Page size, 1..100. */
                limit?: number;
                /** @description Only requests in this status. */
                status?: components["schemas"]["DataJobStatus"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RequestPage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: bad limit, status or cursor */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CreateRequest: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200; the same key with an identical body replays the first answer for free (kept as long as the request, at least 24 h); with a different body it is a 409. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["CreateDataRequestBody"];
            };
        };
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on every answer to a submission (IETF RateLimit draft). */
                    "RateLimit-Policy"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SubmissionResponse"];
                };
            };
            /** @description MALFORMED_REQUEST: the body is not JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INSUFFICIENT_CREDITS: the balance cannot cover the base price; nothing is created */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT: the Idempotency-Key was used with a different body */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description PAYLOAD_TOO_LARGE: body larger than 1 MB */
            413: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED (one `details` entry per problem) or BUDGET_BELOW_BASE_PRICE */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetRequest: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RequestDetail"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such request (or another tenant's) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the id is not a UUID */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    CancelRequest: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RequestDetail"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such request */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description CONFLICT: the request is already completed or failed */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the id is not a uuid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetDebugArtifact: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
                /** @description The artifact's name from the listing, e.g. `screenshot.png`. */
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The artifact */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "image/png": string;
                    "application/json": string;
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such request or artifact (or it expired) */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the id is not a uuid or the name is not an artifact name */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    ListEvents: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RequestEventList"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such request */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the id is not a uuid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    StreamEvents: {
        parameters: {
            query?: never;
            header?: {
                /** @description The last event id received (integer >= 0); the stream resumes after it. */
                "Last-Event-ID"?: number;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description An event stream */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            /** @description The request is terminal and nothing follows Last-Event-ID */
            204: {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such request */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the id is not a uuid or Last-Event-ID is not an integer >= 0 */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED: the read rate; CONCURRENCY_LIMITED: the open event streams (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetExtraction: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ExtractionResult"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such request, or it did not ask for extraction */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RESULT_NOT_READY while the run waits for its page, is queued or running */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the id is not a uuid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetResult: {
        parameters: {
            query?: {
                /** @description `html` (default) or `text`. */
                format?: "html" | "text";
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The page (format=html) or its text (format=text) */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "text/html": string;
                    "text/plain": string;
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such request */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RESULT_NOT_READY while pending or running; CONFLICT when the request failed or was cancelled */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RESULT_EXPIRED: the result passed its retention */
            410: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the id is not a uuid or the format is unknown */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this operation needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    RetryRequest: {
        parameters: {
            query?: never;
            header?: {
                /** @description Length 8..200. */
                "Idempotency-Key"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["RetrySubmissionResponse"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INSUFFICIENT_CREDITS: the balance cannot cover the base price; PROJECT_BUDGET_EXHAUSTED: a workflow run's retry finds no room left in its project's budget cap */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description NOT_FOUND: no such request */
            404: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT, or CONFLICT when the request is not failed */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: the id is not a uuid or the Idempotency-Key is invalid */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED (see Retry-After) */
            429: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: a service this request needs is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetStatement: {
        parameters: {
            query?: {
                /** @description Opaque cursor from a previous page's `next_cursor`. */
                cursor?: string;
                /** @description Page size, 1..100. */
                limit?: number;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["StatementPage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description VALIDATION_FAILED: bad limit or cursor */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: the ledger or the database is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
    GetUsage: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Ok */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ProxyTrafficUsage"];
                };
            };
            /** @description UNAUTHENTICATED: missing, unknown or revoked API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description RATE_LIMITED or CONCURRENCY_LIMITED: the read limits (see Retry-After and the RateLimit headers) */
            429: {
                headers: {
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Limit"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Remaining"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Reset"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "RateLimit-Policy"?: string;
                    /** @description Headers on a 429: when to come back, plus the policy's. */
                    "Retry-After"?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description INTERNAL: an unexpected failure; the body says no more (the request_id finds it in the logs) */
            500: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description DEPENDENCY_UNAVAILABLE: the ledger or the database is unreachable; retry shortly */
            503: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
        };
    };
}

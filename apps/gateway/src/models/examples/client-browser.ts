// The examples of client-browser.controller.ts's operations (tsoa reads each constant into the OpenAPI document: plain literals only,
// no spreads, `as const` or `satisfies`).
import type {
  Project,
  ProjectKey,
  ProjectPage,
  WebhookDeliveryPage,
  WebhookEndpoint,
  WebhookEndpointPage,
  WebhookEndpointWithSecret,
  WebhookMessage,
  Workflow,
  WorkflowDetail,
  WorkflowPage,
  WorkflowVersion,
  Workspace,
  WorkspaceMemberPage,
  WorkspacePage,
} from '../browser.js';

export const createBrowserWorkspaceExample: Workspace = {
  id: '01a21293-b600-7a3e-9b21-4c6d8e0f1a2b',
  name: 'Acme scraping',
  created_at: '2026-11-25T12:00:00.000Z',
};

export const listBrowserWorkspacesExample: WorkspacePage = {
  items: [
    { id: '01a21293-b600-7a3e-9b21-4c6d8e0f1a2b', name: 'Acme scraping', created_at: '2026-11-25T12:00:00.000Z' },
    { id: '01a21296-9d2a-7c41-8d02-5e7f9a1b3c4d', name: 'Acme research', created_at: '2026-11-25T12:03:10.250Z' },
  ],
  next_cursor: 'MDFhMjEyOTYtOWQyYS03YzQxLThkMDItNWU3ZjlhMWIzYzRk',
};

export const listBrowserProjectsExample: ProjectPage = {
  items: [
    {
      id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
      workspace_id: '01a21293-b600-7a3e-9b21-4c6d8e0f1a2b',
      name: 'Price monitor',
      slug: 'price-monitor',
      budget_cap_tokens: 5000,
      environments: [
        { id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f', name: 'production' },
        { id: '01a21294-a060-7b54-9235-8bac2d4e6f70', name: 'staging' },
      ],
      created_at: '2026-11-25T12:01:00.000Z',
    },
  ],
  next_cursor: null,
};

export const listBrowserMembersExample: WorkspaceMemberPage = {
  items: [
    { user_id: 1, role: 'owner', created_at: '2026-11-25T12:00:00.000Z', updated_at: '2026-11-25T12:00:00.000Z' },
    { user_id: 42, role: 'member', created_at: '2026-11-25T12:04:30.000Z', updated_at: '2026-11-25T12:09:12.500Z' },
  ],
  next_cursor: null,
};

export const getBrowserProjectExample: Project = {
  id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
  workspace_id: '01a21293-b600-7a3e-9b21-4c6d8e0f1a2b',
  name: 'Price monitor',
  slug: 'price-monitor',
  budget_cap_tokens: 5000,
  environments: [
    { id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f', name: 'production' },
    { id: '01a21294-a060-7b54-9235-8bac2d4e6f70', name: 'staging' },
  ],
  created_at: '2026-11-25T12:01:00.000Z',
};

export const issueBrowserProjectKeyExample: ProjectKey = {
  id: '01a21295-8ac0-7d61-a346-9cbd3e5f7a81',
  project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
  environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
  label: 'ci-runner',
  api_key: 'wdrp_EXAMPLE00000_EXAMPLE_not-a-real-project-key_000000000000',
  created_at: '2026-11-25T12:02:00.000Z',
};

export const listBrowserProjectKeysExample: { items: ProjectKey[] } = {
  items: [
    {
      id: '01a21295-8ac0-7d61-a346-9cbd3e5f7a81',
      project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
      environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
      label: 'ci-runner',
      created_at: '2026-11-25T12:02:00.000Z',
    },
  ],
};

export const createBrowserWebhookExample: WebhookEndpointWithSecret = {
  endpoint: {
    id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
    environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
    url_origin: 'https://hooks.example.com',
    event_types: ['request.completed', 'request.failed'],
    description: 'Results to the pricing pipeline',
    status: 'enabled',
    disabled_reason: null,
    disabled_at: null,
    created_at: '2026-11-25T12:05:00.000Z',
    updated_at: '2026-11-25T12:05:00.000Z',
  },
  secret: 'whsec_EXAMPLEnotArealSigningSecret00000000000=',
};

export const listBrowserWebhooksExample: WebhookEndpointPage = {
  items: [
    {
      id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
      project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
      environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
      url_origin: 'https://hooks.example.com',
      event_types: ['request.completed', 'request.failed'],
      description: 'Results to the pricing pipeline',
      status: 'enabled',
      disabled_reason: null,
      disabled_at: null,
      created_at: '2026-11-25T12:05:00.000Z',
      updated_at: '2026-11-25T12:05:00.000Z',
    },
  ],
  next_cursor: null,
};

export const getBrowserWebhookExample: WebhookEndpoint = {
  id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
  environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
  url_origin: 'https://hooks.example.com',
  event_types: ['request.completed', 'request.failed'],
  description: 'Results to the pricing pipeline',
  status: 'enabled',
  disabled_reason: null,
  disabled_at: null,
  created_at: '2026-11-25T12:05:00.000Z',
  updated_at: '2026-11-25T12:05:00.000Z',
};

export const updateBrowserWebhookExample: WebhookEndpoint = {
  id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
  environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
  url_origin: 'https://hooks.example.com',
  event_types: ['request.completed', 'request.failed', 'tokens.refunded'],
  description: 'Results to the pricing pipeline',
  status: 'enabled',
  disabled_reason: null,
  disabled_at: null,
  created_at: '2026-11-25T12:05:00.000Z',
  updated_at: '2026-11-25T12:30:00.000Z',
};

export const disableBrowserWebhookExample: WebhookEndpoint = {
  id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
  environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
  url_origin: 'https://hooks.example.com',
  event_types: ['request.completed', 'request.failed'],
  description: 'Results to the pricing pipeline',
  status: 'disabled',
  disabled_reason: 'manual',
  disabled_at: '2026-11-25T12:40:00.000Z',
  created_at: '2026-11-25T12:05:00.000Z',
  updated_at: '2026-11-25T12:40:00.000Z',
};

export const rotateBrowserWebhookSecretExample: WebhookEndpointWithSecret = {
  endpoint: {
    id: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
    project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
    environment_id: '01a21294-a060-7b53-8124-7a9b1c3d5e6f',
    url_origin: 'https://hooks.example.com',
    event_types: ['request.completed', 'request.failed'],
    description: 'Results to the pricing pipeline',
    status: 'enabled',
    disabled_reason: null,
    disabled_at: null,
    created_at: '2026-11-25T12:05:00.000Z',
    updated_at: '2026-11-25T12:45:00.000Z',
  },
  secret: 'whsec_EXAMPLErotatedNotArealSigningSecret000=',
};

export const listBrowserWebhookDeliveriesExample: WebhookDeliveryPage = {
  items: [
    {
      id: 'd4e5f6a7-b8c9-4d0e-9f1a-2b3c4d5e6f70',
      message_id: 'msg_6a5b4c3d2e1f4a0b9c8d7e6f5a4b3c2d',
      event_type: 'request.completed',
      attempt: 2,
      outcome: 'delivered',
      status_code: 200,
      latency_ms: 143,
      response_excerpt: '{"received":true}',
      error: null,
      created_at: '2026-11-25T12:07:41.020Z',
    },
    {
      id: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
      message_id: 'msg_6a5b4c3d2e1f4a0b9c8d7e6f5a4b3c2d',
      event_type: 'request.completed',
      attempt: 1,
      outcome: 'failed',
      status_code: 503,
      latency_ms: 87,
      response_excerpt: 'upstream unavailable, see https://status.example.com',
      error: null,
      created_at: '2026-11-25T12:07:10.480Z',
    },
  ],
  next_cursor: null,
};

export const redeliverBrowserWebhookMessageExample: WebhookMessage = {
  id: 'msg_6a5b4c3d2e1f4a0b9c8d7e6f5a4b3c2d',
  event_type: 'request.completed',
  status: 'pending',
  attempts: 8,
  next_attempt_at: '2026-11-26T16:02:11.000Z',
  delivered_at: null,
  created_at: '2026-11-25T12:07:10.300Z',
};

export const createBrowserWorkflowExample: Workflow = {
  id: '01a2129c-ddc0-7e72-b457-0dce4f6a8b92',
  project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
  name: 'Catalog prices',
  workflow_version: 0,
  active_version_id: null,
  created_at: '2026-11-25T12:10:00.000Z',
  updated_at: '2026-11-25T12:10:00.000Z',
};

export const listBrowserWorkflowsExample: WorkflowPage = {
  items: [
    {
      id: '01a2129c-ddc0-7e72-b457-0dce4f6a8b92',
      project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
      name: 'Catalog prices',
      workflow_version: 2,
      active_version_id: '01a2129d-c820-7f83-8568-1edf5a7b9ca3',
      created_at: '2026-11-25T12:10:00.000Z',
      updated_at: '2026-11-25T12:25:00.000Z',
    },
  ],
  next_cursor: null,
};

export const getBrowserWorkflowExample: WorkflowDetail = {
  id: '01a2129c-ddc0-7e72-b457-0dce4f6a8b92',
  project_id: '01a21294-a060-7b52-a013-6f8a0b2c4d5e',
  name: 'Catalog prices',
  workflow_version: 2,
  active_version_id: '01a2129d-c820-7f83-8568-1edf5a7b9ca3',
  created_at: '2026-11-25T12:10:00.000Z',
  updated_at: '2026-11-25T12:25:00.000Z',
  versions: [
    {
      id: '01a212a6-0580-7094-9679-2fe06b8cadb4',
      workflow_id: '01a2129c-ddc0-7e72-b457-0dce4f6a8b92',
      number: 2,
      status: 'draft',
      revision: 3,
      active: false,
      definition: {
        url: 'https://shop.example.com/catalog',
        mode: 'residential_browser',
        geo_country: 'DE',
        wait_for_selector: '#products',
        result_text_selector: '#products',
      },
      created_at: '2026-11-25T12:20:00.000Z',
      updated_at: '2026-11-25T12:24:00.000Z',
      published_at: null,
    },
    {
      id: '01a2129d-c820-7f83-8568-1edf5a7b9ca3',
      workflow_id: '01a2129c-ddc0-7e72-b457-0dce4f6a8b92',
      number: 1,
      status: 'published',
      revision: 2,
      active: true,
      definition: {
        url: 'https://shop.example.com/catalog',
        wait_for_selector: '#products',
        browser_actions: [{ type: 'click', selector: '#load-more' }],
        result_text_selector: '#products',
      },
      created_at: '2026-11-25T12:11:00.000Z',
      updated_at: '2026-11-25T12:15:00.000Z',
      published_at: '2026-11-25T12:15:00.000Z',
    },
  ],
};

export const createBrowserWorkflowVersionExample: WorkflowVersion = {
  id: '01a212a6-0580-7094-9679-2fe06b8cadb4',
  workflow_id: '01a2129c-ddc0-7e72-b457-0dce4f6a8b92',
  number: 2,
  status: 'draft',
  revision: 1,
  active: false,
  definition: {
    url: 'https://shop.example.com/catalog',
    mode: 'residential_browser',
    geo_country: 'DE',
    wait_for_selector: '#products',
    result_text_selector: '#products',
  },
  created_at: '2026-11-25T12:20:00.000Z',
  updated_at: '2026-11-25T12:20:00.000Z',
  published_at: null,
};

export const updateBrowserWorkflowVersionExample: WorkflowVersion = {
  id: '01a212a6-0580-7094-9679-2fe06b8cadb4',
  workflow_id: '01a2129c-ddc0-7e72-b457-0dce4f6a8b92',
  number: 2,
  status: 'draft',
  revision: 4,
  active: false,
  definition: {
    url: 'https://shop.example.com/catalog',
    mode: 'residential_browser',
    geo_country: 'DE',
    wait_for_selector: '#products',
    result_text_selector: '#products',
  },
  created_at: '2026-11-25T12:20:00.000Z',
  updated_at: '2026-11-25T12:26:00.000Z',
  published_at: null,
};

// Generated from openapi/openapi.json by scripts/generate.mjs (openapi-typescript). Do not edit.
export interface paths {
    "/api/v1/data/requests": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * @description Submit a request to fetch a page. The request runs asynchronously; poll its detail or follow
         *     its events.
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
        /** @description Read one request of the caller. Another tenant's id is a 404. */
        get: operations["GetRequest"];
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
        FieldIssue: {
            field: string;
            issue: string;
        };
        /** @description The one error body of the API. */
        PublicErrorBody: {
            /** @description Stable machine-readable code, e.g. `VALIDATION_FAILED`, `IDEMPOTENCY_CONFLICT`. */
            code: string;
            message: string;
            request_id: string;
            details?: components["schemas"]["FieldIssue"][];
        };
        /**
         * @description Status of a request as reported by create, retry and list.
         * @enum {string}
         */
        DataJobStatus: "pending" | "running" | "solving_captcha" | "completed" | "failed" | "cancelled";
        /** @enum {string} */
        RequestMode: "direct" | "auto" | "browser" | "http" | "residential" | "residential_browser";
        RouteMode: components["schemas"]["RequestMode"] | "mixed";
        /** @enum {string} */
        ProxyNetworkType: "datacenter" | "residential" | "premium";
        /** @description Construct a type with a set of properties K of type T */
        "Record_string.unknown_": {
            [key: string]: unknown;
        };
        /** @description Response of create and retry. */
        SubmissionResponse: {
            /** Format: uuid */
            id: string;
            /** @description Target origin only. */
            url?: string;
            status: components["schemas"]["DataJobStatus"];
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
        };
        /** @enum {string} */
        ProxySetting: "random" | "off";
        /** @description Construct a type with a set of properties K of type T */
        "Record_string.string_": {
            [key: string]: string;
        };
        /** @enum {string} */
        ResourcePolicy: "adaptive" | "compatible";
        BrowserAction: {
            type: string;
        } & {
            [key: string]: unknown;
        };
        /** @description Body of POST /api/v1/data/requests. */
        CreateDataRequestBody: {
            /** Format: uri */
            url: string;
            mode?: components["schemas"]["RequestMode"];
            geo_country?: string;
            /** Format: int32 */
            max_credits_per_request?: number;
            proxy?: components["schemas"]["ProxySetting"];
            proxy_type?: components["schemas"]["ProxyNetworkType"];
            headers?: components["schemas"]["Record_string.string_"];
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
            wait_for_text?: string | null;
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
            extraction?: components["schemas"]["Record_string.unknown_"] | null;
        };
        /** @description Status of a request as reported by its detail. */
        DataVisibleStatus: components["schemas"]["DataJobStatus"] | ("waiting_for_page" | "queued");
        /** @enum {string} */
        DataTokenState: "reserved" | "settlement_pending" | "settled" | "refunded";
        /** @description Response of GET /api/v1/data/requests/{id}. */
        RequestDetail: {
            /** Format: uuid */
            id: string;
            batch_id: string | null;
            url: string;
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
            request: components["schemas"]["Record_string.unknown_"];
            debug_artifacts: components["schemas"]["Record_string.unknown_"];
            error: components["schemas"]["Record_string.unknown_"] | null;
            user_error: components["schemas"]["Record_string.unknown_"] | null;
            result_meta: components["schemas"]["Record_string.unknown_"] | null;
            /** @enum {string|null} */
            proxy_used: "platform" | null;
            /** Format: date-time */
            created_at: string;
            started_at: string | null;
            finished_at: string | null;
            result_expires_at: string | null;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    CreateRequest: {
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
                "application/json": components["schemas"]["CreateDataRequestBody"];
            };
        };
        responses: {
            /** @description Accepted */
            202: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["SubmissionResponse"];
                };
            };
            /** @description Malformed JSON */
            400: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description Missing or invalid API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description Not enough tokens */
            402: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description IDEMPOTENCY_CONFLICT */
            409: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description Validation failed */
            422: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description A dependency is unavailable */
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
            /** @description Missing or invalid API key */
            401: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["PublicErrorBody"];
                };
            };
            /** @description No such request */
            404: {
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

-- The result cache (domain/result-cache.ts): an entry points at a completed request whose stored
-- result an identical later request of the same tenant gets a copy of. The key is an HMAC-SHA256
-- of the tenant id, the normalised URL and every option that changes the result, so neither the
-- URL nor any option is stored in clear. The tenant is part of the primary key as well as of the
-- hash: a lookup names it, so one tenant's entry can never answer another's request.
CREATE TABLE "result_cache" (
    "tenant_id" UUID NOT NULL,
    "key_hash" TEXT NOT NULL,
    "source_request_id" UUID NOT NULL,
    "bytes" INTEGER NOT NULL,
    -- Microseconds: eviction goes by age, and fills a millisecond apart must not tie.
    "stored_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "result_cache_pkey" PRIMARY KEY ("tenant_id", "key_hash"),
    CONSTRAINT "result_cache_source_request_id_fkey" FOREIGN KEY ("source_request_id") REFERENCES "data_requests"("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- Eviction of a tenant's oldest entries beyond its cap (at every fill): newest first, by index.
CREATE INDEX "result_cache_tenant_id_stored_at_idx" ON "result_cache"("tenant_id", "stored_at" DESC);

-- The retention purge: expired entries, and the oldest beyond the total bytes cap.
CREATE INDEX "result_cache_expires_at_idx" ON "result_cache"("expires_at");
CREATE INDEX "result_cache_stored_at_idx" ON "result_cache"("stored_at");

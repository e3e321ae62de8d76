-- The browser stage: what a failed render left for debugging (a listing; the bytes stay with
-- browser-renderer), and the readable text of a rendered page (taken from the live DOM, so it
-- cannot be recomputed from the stored HTML the way an HTTP result's text is).
ALTER TABLE "data_requests" ADD COLUMN "debug_artifacts" JSONB;

ALTER TABLE "request_results" ADD COLUMN "text" TEXT;

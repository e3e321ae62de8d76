-- A rendered page arrives from browser-renderer as bytes (domain/render-uploads.ts), written in
-- chunks as they arrive instead of one base64 JSON value; the request's finishing move joins the
-- chunks into request_results and deletes them; the retention purge removes abandoned ones.
CREATE TABLE "render_upload_chunks" (
    "request_id" UUID NOT NULL,
    "upload_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "chunk" BYTEA NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "render_upload_chunks_pkey" PRIMARY KEY ("request_id", "upload_id", "seq")
);
CREATE INDEX "render_upload_chunks_created_at_idx" ON "render_upload_chunks"("created_at");

-- Uploads that arrived whole, with the length and SHA-256 measured (and matched to the declared ones).
CREATE TABLE "render_uploads" (
    "request_id" UUID NOT NULL,
    "upload_id" UUID NOT NULL,
    "bytes" INTEGER NOT NULL,
    "sha256" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "render_uploads_pkey" PRIMARY KEY ("request_id", "upload_id")
);
CREATE INDEX "render_uploads_created_at_idx" ON "render_uploads"("created_at");

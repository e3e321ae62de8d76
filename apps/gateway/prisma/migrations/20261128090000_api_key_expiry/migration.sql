-- Optional expiry of an API key (issue-key --expires-in-days): a key past it is refused like a revoked one.
ALTER TABLE "api_keys" ADD COLUMN "expires_at" TIMESTAMPTZ(3);

export type SchemaEngineKind = 'native' | 'wasm';
export type SchemaEngineSource = 'env' | 'download' | 'shim';

export interface ResolvedSchemaEngine {
  kind: SchemaEngineKind;
  source: SchemaEngineSource;
  /** Absolute path to give the Prisma CLI as PRISMA_SCHEMA_ENGINE_BINARY. */
  path: string;
  /** Human-readable explanation of the choice. */
  reason: string;
}

export interface ResolveOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Directory of the `prisma` package to use (default: resolved from cwd, then from this package). */
  prismaDir?: string;
  /** Default: $WDR_PRISMA_ENGINE or 'auto'. */
  prefer?: 'auto' | 'wasm' | 'native';
}

/** Absolute path of the Wasm-backed `schema-engine` stand-in (bin/schema-engine.mjs). */
export declare const SHIM_PATH: string;
export declare const PACKAGE_DIR: string;

/**
 * Native engine if PRISMA_SCHEMA_ENGINE_BINARY points to an existing file or the binary
 * @prisma/engines downloads is present (and reports the expected version); the Wasm shim otherwise.
 */
export declare function resolveSchemaEngine(options?: ResolveOptions): ResolvedSchemaEngine;
export declare function resolveSchemaEnginePath(options?: ResolveOptions): string;

/** A copy of the environment with PRISMA_SCHEMA_ENGINE_BINARY (and PATH) set for the Prisma CLI. */
export declare function prismaEnv(options?: ResolveOptions): { env: NodeJS.ProcessEnv; engine: ResolvedSchemaEngine };

export declare function findPrismaCli(options?: {
  from?: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}): { dir: string; bin: string; version: string } | undefined;

export declare function expectedEnginesHash(prismaDir: string): string | undefined;
export declare function nativeEngineCandidates(prismaDir: string): string[];

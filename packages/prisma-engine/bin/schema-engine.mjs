#!/usr/bin/env node
// Drop-in for Prisma's native `schema-engine` binary (see ../src/shim.mjs). Point the Prisma
// CLI at it with PRISMA_SCHEMA_ENGINE_BINARY, or let `wdr-prisma` do it.
import { main } from '../src/shim.mjs';

await main();

/**
 * The operator command lines' batch mode (`node apps/<service>/dist/admin.js --batch`): one JSON
 * request per line on stdin, one reply per line on stdout, in order, until stdin ends. A caller
 * with many commands to run (the test kit) pays for one process start, not one per command. The
 * reply carries what a single run would have printed and its exit code.
 */
export const ADMIN_BATCH_FLAG = '--batch';

export interface AdminBatchRequest {
  /** The command line after `admin.js`, as a single run would get it. */
  args: string[];
  /** Variables the command sees over the batch process's own environment. */
  env?: Record<string, string>;
}

export interface AdminBatchReply {
  /** The exit code a single run would have ended with. */
  code: number;
  /** Its standard output and standard error, lines joined with "\n". */
  stdout: string;
  stderr: string;
}

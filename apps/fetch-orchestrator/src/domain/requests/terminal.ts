import { REQUEST_STATUSES, TERMINAL_REQUEST_STATUSES, type RequestStatusName } from '@wdr/contracts';

/** The statuses a request stops moving in (the contracts' TERMINAL_REQUEST_STATUSES), for membership tests and `notIn` filters. */
export const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_REQUEST_STATUSES);

const STATUSES: ReadonlySet<string> = new Set(REQUEST_STATUSES);

/**
 * A stored status as the tenant sees it in every view (detail, create/retry answers and their
 * replays, batch jobs): the status itself, `solving_captcha` included; anything unknown (a status
 * of a later release read by this one) shows as `running`.
 */
export function publicStatusOf(s: string): RequestStatusName {
  return (STATUSES.has(s) ? s : 'running') as RequestStatusName;
}

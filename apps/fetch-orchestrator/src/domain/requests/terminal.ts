import { TERMINAL_REQUEST_STATUSES } from '@wdr/contracts';

/** The statuses a request stops moving in (the contracts' TERMINAL_REQUEST_STATUSES), for membership tests and `notIn` filters. */
export const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_REQUEST_STATUSES);

import { describe, expect, it } from '@jest/globals';
import type { ExtractionRunView } from '@wdr/contracts';
import { visibleRunStatus } from './extraction-runs.js';

/**
 * The top-level status of an extraction request: the run's, except where the run cannot know yet
 * (its job is on its way once the page is terminal) or does not exist (its createRun was lost or
 * has not landed: the job creates it).
 */
const run = (status: ExtractionRunView['status']): ExtractionRunView => ({
  run_id: '00000000-0000-4000-8000-000000000001',
  request_id: '00000000-0000-4000-8000-000000000002',
  recipe_id: '00000000-0000-4000-8000-000000000003',
  version_id: '00000000-0000-4000-8000-000000000004',
  status,
  page_status: null,
  error: null,
  data: null,
  warnings: [],
  retried_from_run_id: null,
  created_at: '2026-11-25T00:00:00.000Z',
  started_at: null,
  finished_at: null,
});

const NOT_TERMINAL = ['pending', 'running', 'solving_captcha'] as const;

describe('visibleRunStatus', () => {
  it.each(NOT_TERMINAL)('is waiting_for_page while the page is %s, with or without a run', (page) => {
    expect(visibleRunStatus(run('waiting_for_page'), page)).toBe('waiting_for_page');
    expect(visibleRunStatus(undefined, page)).toBe('waiting_for_page');
  });

  it.each(['completed', 'failed', 'cancelled'] as const)(
    'is queued once the page is %s and the run still waits (its job is on the way)',
    (page) => {
      expect(visibleRunStatus(run('waiting_for_page'), page)).toBe('queued');
    },
  );

  it('without a run: queued after a completed page (the job creates the run), failed after a failed or cancelled one', () => {
    expect(visibleRunStatus(undefined, 'completed')).toBe('queued');
    expect(visibleRunStatus(undefined, 'failed')).toBe('failed');
    expect(visibleRunStatus(undefined, 'cancelled')).toBe('failed');
  });

  it.each([
    ['queued', 'completed'],
    ['running', 'completed'],
    ['completed', 'completed'],
    ['failed', 'completed'],
    ['failed', 'failed'],
    ['failed', 'cancelled'],
  ] as const)('is the run’s own %s once it left waiting_for_page (page %s)', (status, page) => {
    expect(visibleRunStatus(run(status), page)).toBe(status);
  });

  it('never shows a page status that is not a run status', () => {
    for (const page of [...NOT_TERMINAL, 'completed', 'failed', 'cancelled']) {
      for (const r of [undefined, ...(['waiting_for_page', 'queued', 'running', 'completed', 'failed'] as const).map(run)]) {
        expect(['waiting_for_page', 'queued', 'running', 'completed', 'failed']).toContain(visibleRunStatus(r, page));
      }
    }
  });
});

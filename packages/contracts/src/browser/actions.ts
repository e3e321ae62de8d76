import { z } from 'zod';

/**
 * Browser actions, version 1: the declared set of steps a submission may ask the browser stage to
 * perform, in order, in a fresh isolated context. The gateway validates a submission with these
 * schemas (an unknown type or a bad field is VALIDATION_FAILED with per-field details) and the
 * browser-renderer executes exactly these shapes. A new action type or field is a new version.
 */
export const BROWSER_ACTIONS_VERSION = 1;

export const BROWSER_ACTION_LIMITS = {
  maxActions: 20,
  selectorLength: 500,
  valueLength: 10_000,
  textLength: 1_000,
  keyLength: 32,
  selectValues: 50,
  /** Longest single `wait`. */
  waitMs: 10_000,
  /** Longest wait of a `wait_for_selector` / `wait_for_text` action (the spec's wait bound). */
  waitForMs: 30_000,
  typeDelayMs: 200,
  scrollPixels: 100_000,
} as const;

const L = BROWSER_ACTION_LIMITS;

const str = (min: number, max: number) =>
  z
    .string({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a string') })
    .min(min, `length must be ${min}..${max}`)
    .max(max, `length must be ${min}..${max}`);

const int = (min: number, max: number) =>
  z.number({ error: 'must be an integer' }).int('must be an integer').min(min, `must be ${min}..${max}`).max(max, `must be ${min}..${max}`);

const selector = str(1, L.selectorLength);
/** When true, a failure of this action is recorded and the next action runs; otherwise the request fails. */
const optional = z.boolean({ error: 'must be a boolean' }).optional();

const action = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.strictObject(
    { type: z.literal(type), optional, ...shape },
    { error: (iss) => (iss.code === 'unrecognized_keys' ? 'is not a field of this action' : 'must be an object') },
  );

export const ClickAction = action('click', { selector });
/** Replace the value of an input, textarea or contenteditable element. */
export const FillAction = action('fill', { selector, value: str(0, L.valueLength) });
/** Type text key by key into the element (after focusing it). */
export const TypeAction = action('type', { selector, text: str(1, L.valueLength), delay_ms: int(0, L.typeDelayMs).optional() });
/** Press one key (`Enter`, `Tab`, `ArrowDown`, `a`), optionally on a focused element. */
export const PressAction = action('press', {
  key: str(1, L.keyLength).regex(
    /^(?:[^\p{C}]|[A-Z][A-Za-z0-9]+)$/u,
    'must be a key name such as Enter, Tab, ArrowDown, or a single character',
  ),
  selector: selector.optional(),
});
export const HoverAction = action('hover', { selector });
/** Choose options of a <select> by their values. */
export const SelectAction = action('select', {
  selector,
  values: z
    .array(str(0, L.textLength), { error: 'must be an array of strings' })
    .min(1, `1..${L.selectValues} values`)
    .max(L.selectValues, `1..${L.selectValues} values`),
});
/** Scroll an element into view, the page to its top or bottom (default), or by a number of pixels. */
export const ScrollAction = action('scroll', {
  selector: selector.optional(),
  to: z.enum(['top', 'bottom'], { error: 'must be top or bottom' }).optional(),
  y: int(-L.scrollPixels, L.scrollPixels).optional(),
});
export const WaitAction = action('wait', { ms: int(1, L.waitMs) });
export const WaitForSelectorAction = action('wait_for_selector', {
  selector,
  timeout_ms: int(1, L.waitForMs).optional(),
  visible: z.boolean({ error: 'must be a boolean' }).optional(),
});
export const WaitForTextAction = action('wait_for_text', { text: str(1, L.textLength), timeout_ms: int(1, L.waitForMs).optional() });

export const BROWSER_ACTION_SCHEMAS = {
  click: ClickAction,
  fill: FillAction,
  type: TypeAction,
  press: PressAction,
  hover: HoverAction,
  select: SelectAction,
  scroll: ScrollAction,
  wait: WaitAction,
  wait_for_selector: WaitForSelectorAction,
  wait_for_text: WaitForTextAction,
} as const;

export type BrowserActionType = keyof typeof BROWSER_ACTION_SCHEMAS;
export const BROWSER_ACTION_TYPES = Object.keys(BROWSER_ACTION_SCHEMAS) as BrowserActionType[];

const scrollTargets = (a: { selector?: string | undefined; to?: string | undefined; y?: number | undefined }) =>
  [a.selector, a.to, a.y].filter((v) => v !== undefined).length;

/**
 * One action: dispatched on `type` so that an unknown type is reported on `type` and a bad field on
 * that field (`browser_actions.3.selector`), never as "matches none of the alternatives".
 */
export const browserActionSchema = z
  .discriminatedUnion(
    'type',
    [
      ClickAction,
      FillAction,
      TypeAction,
      PressAction,
      HoverAction,
      SelectAction,
      ScrollAction,
      WaitAction,
      WaitForSelectorAction,
      WaitForTextAction,
    ],
    {
      error: (iss) =>
        iss.code === 'invalid_union' ? `must be one of ${BROWSER_ACTION_TYPES.join(', ')}` : 'must be an object with a type',
    },
  )
  .superRefine((a, ctx) => {
    if (a.type === 'scroll' && scrollTargets(a) > 1) ctx.addIssue({ code: 'custom', message: 'give at most one of selector, to and y' });
  });

export const browserActionsSchema = z
  .array(browserActionSchema, { error: 'must be an array' })
  .max(L.maxActions, `at most ${L.maxActions} items`);

export type BrowserAction = z.infer<typeof browserActionSchema>;

/**
 * A recipe that expands past any extraction budget (a "DSL bomb"), for the extractor's budget tests
 * and the gateway's abuse-bounds end-to-end test: nested `multiple` object scopes over nested
 * markup, so every level re-reads every deeper one (each `div.n` scope inside another matches every
 * deeper `div.n` again).
 */
export const DSL_BOMB_RECIPE = {
  dsl_version: 1,
  fields: [
    {
      name: 'a',
      type: 'object',
      multiple: true,
      scope: 'div.n',
      fields: [
        {
          name: 'b',
          type: 'object',
          multiple: true,
          scope: 'div.n',
          fields: [{ name: 'c', type: 'string', multiple: true, selectors: ['span'] }],
        },
      ],
    },
  ],
};

/** The page the bomb recipe explodes on: `depth` nested `div.n`, each with a span of text. */
export function dslBombPage(depth: number): string {
  return `<!doctype html><html><body>${'<div class="n"><span>xxxxxxxxxxxxxxxx</span>'.repeat(depth)}${'</div>'.repeat(depth)}</body></html>`;
}

/** Variables inside variables (ci-variables/expand-variables.ts), as the Service 15.2 expands them for runners. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expandVariables, type ExpandableVariable } from '../../src/domain/ci-variables/expand-variables.ts';

const v = (key: string, value: string, raw = false): ExpandableVariable => ({ key, value, ...(raw ? { raw: true as const } : {}) });
const values = (list: ExpandableVariable[]) => list.map((x) => `${x.key}=${x.value}`);

describe('expandVariables', () => {
  it('expands $NAME, ${NAME} and %NAME% with the last definition, recursively, keeping unknown ones', () => {
    const out = expandVariables([
      v('HOST', 'example.com'), v('URL', 'https://$HOST/${PATH_PART}?x=%HOST%'), v('PATH_PART', 'api/$VERSION'), v('VERSION', 'v1'),
      v('HOST', 'kiln.test'), v('UNKNOWN', '$NOT_SET and 100%'),
    ]);
    assert.deepEqual(values(out), [
      'HOST=example.com', 'URL=https://kiln.test/api/v1?x=kiln.test', 'PATH_PART=api/v1', 'VERSION=v1', 'HOST=kiln.test', 'UNKNOWN=$NOT_SET and 100%',
    ]);
  });

  it('leaves raw variables as they are, and inserts them unexpanded where referenced', () => {
    const out = expandVariables([v('A', 'a'), v('RAW', '$A-literal', true), v('USES', 'x-$RAW')]);
    assert.deepEqual(values(out), ['A=a', 'RAW=$A-literal', 'USES=x-$A-literal']);
    assert.equal(out[1].raw, true);
  });

  it('expands nothing when references form a cycle or would grow past 1 MB', () => {
    const cyclic = [v('A', '$B'), v('B', '$A'), v('C', '$D'), v('D', 'd')];
    assert.deepEqual(expandVariables(cyclic), cyclic);
    const doubling = [v('L0', 'x'.repeat(1000)), ...Array.from({ length: 12 }, (_, i) => v(`L${i + 1}`, `$L${i}$L${i}`))];
    assert.deepEqual(expandVariables(doubling), doubling);
  });
});

/**
 * flat and flatWords (src/http/entities/serializers.ts) write the strings presenters build as
 * flat strings, for JSON.stringify's fast path. Whether a string is flat is V8's business (the
 * bench measures it); here they must give exactly the strings a template literal and `split`
 * give, whatever the words.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { flat, flatWords } from '../../src/http/entities/serializers.ts';

const split = (list: string) => (list === '' ? [] : list.split(' '));

describe('flat strings', () => {
  it('flat joins its parts as a template literal would, numbers included', () => {
    assert.equal(flat('http://kiln.test', '/-/jobs/', 42), 'http://kiln.test/-/jobs/42');
    assert.equal(flat('', 'a'), 'a');
    assert.equal(flat(), '');
    assert.equal(flat('status_', 'success'), `status_${'success'}`);
  });

  it('flatWords splits a space-separated list as split does, words of every length', () => {
    const lists = [
      '', 'a', 'shared', 'docker-privileged', 'docker-privileged linux-amd64-large shared',
      'x'.repeat(12), 'x'.repeat(13), 'x'.repeat(24), 'x'.repeat(25), `${'y'.repeat(1024)} z`,
      // Repeated, leading and trailing separators give empty words, as split does.
      'a  b', ' lead', 'trail ', ' ',
      // Characters outside the BMP across a piece boundary are rejoined whole.
      `${'a'.repeat(11)}😀${'b'.repeat(20)}`, 'ünïcödé-tåg-nåme-lóng gpu',
    ];
    for (const list of lists) assert.deepEqual(flatWords(list), split(list), JSON.stringify(list));
  });

  it('flatWords agrees with split on random lists', () => {
    let seed = 7;
    const next = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const alphabet = 'ab-_.:/0123456789 é😀';
    for (let i = 0; i < 2_000; i++) {
      const length = Math.floor(next() * 80);
      let list = '';
      for (let c = 0; c < length; c++) list += [...alphabet][Math.floor(next() * [...alphabet].length)];
      assert.deepEqual(flatWords(list), split(list), JSON.stringify(list));
    }
  });
});

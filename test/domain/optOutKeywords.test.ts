import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_OPT_OUT_KEYWORDS, keywordProblems, matchingKeyword } from '../../src/domain/optOutKeywords.ts';

describe('opt-out keywords', () => {
  it('match the whole text, trimmed, in any case, never a part of it', () => {
    assert.equal(matchingKeyword(DEFAULT_OPT_OUT_KEYWORDS, '  stop\n'), 'STOP');
    assert.equal(matchingKeyword(DEFAULT_OPT_OUT_KEYWORDS, 'Unsubscribe'), 'UNSUBSCRIBE');
    assert.equal(matchingKeyword(DEFAULT_OPT_OUT_KEYWORDS, 'ＳＴＯＰ'), 'STOP', 'full-width letters are the same word');
    assert.equal(matchingKeyword(['Não quero'], 'NÃO QUERO'), 'Não quero');
    for (const text of ['please stop', 'stopped', 'S T O P', '', '   ', undefined]) {
      assert.equal(matchingKeyword(DEFAULT_OPT_OUT_KEYWORDS, text), undefined, JSON.stringify(text));
    }
  });

  it('name each blank, invisible, overlong or repeated keyword', () => {
    assert.deepEqual(keywordProblems(['STOP', 'Cancelar']), []);
    assert.deepEqual(
      keywordProblems(['STOP', ' ', 'a\u0007b', 'x\u200by', 'x'.repeat(65), ' stop ']).map((problem) => [problem.field, problem.code]),
      [
        ['/keywords/1', 'empty'],
        ['/keywords/2', 'invalid'],
        ['/keywords/3', 'invalid'],
        ['/keywords/4', 'too_long'],
        ['/keywords/5', 'duplicate'],
      ],
    );
  });
});

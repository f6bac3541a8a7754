import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  findPlaceholders,
  parsePlaceholders,
  placeholderCount,
  renderText,
  type TemplateDraft,
  validateTemplate,
} from '../../src/domain/templates.ts';
import { sandboxReview, wordCount } from '../../src/providers/sandbox/reviewRules.ts';

const VALID: TemplateDraft = {
  name: 'order_update',
  language: 'pt_BR',
  category: 'UTILITY',
  components: [
    { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}' },
    { type: 'BODY', text: 'Hello {{1}}, your order {{2}} has shipped.' },
    { type: 'FOOTER', text: 'Reply STOP to opt out' },
  ],
};

function errorsOf(changes: Partial<TemplateDraft>) {
  return validateTemplate({ ...VALID, ...changes });
}

function bodyErrors(text: string) {
  return validateTemplate({ ...VALID, components: [{ type: 'BODY', text }] });
}

function only(errors: ReturnType<typeof validateTemplate>) {
  assert.equal(errors.length, 1, JSON.stringify(errors));
  return errors[0]!;
}

describe('template rules', () => {
  it('accepts a valid template, with or without HEADER and FOOTER, in any order', () => {
    assert.deepEqual(validateTemplate(VALID), []);
    assert.deepEqual(validateTemplate({ ...VALID, components: [{ type: 'BODY', text: 'Hi' }] }), []);
    assert.deepEqual(validateTemplate({ ...VALID, components: [...VALID.components].reverse() }), []);
  });

  describe('name', () => {
    it('accepts slugs of 1 to 512 characters', () => {
      for (const name of ['a', '0', '_', 'order_update_2', 'x'.repeat(512)]) assert.deepEqual(errorsOf({ name }), [], name);
    });

    it('rejects anything else at /name, suggesting a slug when it can', () => {
      const upper = only(errorsOf({ name: 'Order Update' }));
      assert.equal(upper.field, '/name');
      assert.equal(upper.code, 'invalid_format');
      assert.match(upper.message, /lowercase letters a-z, digits and underscores; try "order_update"/);
      for (const name of ['order-update', 'pedido_ção', 'a b', 'ORDER', 'x\u0000y', '😀']) {
        assert.equal(only(errorsOf({ name })).code, 'invalid_format', name);
      }
      assert.equal(only(errorsOf({ name: '' })).code, 'too_short');
      const long = only(errorsOf({ name: 'x'.repeat(513) }));
      assert.equal(long.code, 'too_long');
      assert.match(long.message, /513 characters long; the limit is 512/);
    });

    it('never echoes a huge value back in full', () => {
      const message = only(errorsOf({ name: 'X'.repeat(500) })).message;
      assert.ok(message.length < 200, message);
    });
  });

  describe('language', () => {
    it('accepts the code forms of CONTRACT §3', () => {
      for (const language of ['en', 'fil', 'en_US', 'pt_BR', 'zh_HK', 'es_MX', 'sr_Latn', 'es_419'.slice(0, 2)]) {
        assert.deepEqual(errorsOf({ language }), [], language);
      }
    });

    it('rejects other forms at /language, and explains a dash', () => {
      for (const language of ['', 'e', 'english', 'EN', 'en_', 'en_U', 'en_USAAA', 'en-US', 'en_419', 'en US']) {
        const error = only(errorsOf({ language }));
        assert.equal(error.field, '/language', language);
        assert.equal(error.code, 'invalid_format');
      }
      assert.match(only(errorsOf({ language: 'pt-BR' })).message, /Use an underscore: "pt_BR"/);
    });
  });

  describe('category', () => {
    it('accepts the three categories', () => {
      for (const category of ['UTILITY', 'MARKETING']) assert.deepEqual(errorsOf({ category }), []);
      // AUTHENTICATION templates follow Meta's authentication model (test/domain/authenticationTemplates.test.ts).
      const otp = [{ type: 'BODY' }, { type: 'BUTTONS', buttons: [{ type: 'OTP', otp_type: 'COPY_CODE' }] }];
      assert.deepEqual(errorsOf({ category: 'AUTHENTICATION', components: otp }), []);
    });

    it('rejects anything else at /category, noting the case', () => {
      const error = only(errorsOf({ category: 'marketing' }));
      assert.equal(error.field, '/category');
      assert.equal(error.code, 'invalid_value');
      assert.match(error.message, /UTILITY, MARKETING, AUTHENTICATION.*uppercase: "MARKETING"/);
      assert.equal(only(errorsOf({ category: 'PROMO' })).code, 'invalid_value');
    });
  });

  describe('components', () => {
    it('requires exactly one BODY', () => {
      const none = only(errorsOf({ components: [] }));
      assert.deepEqual([none.field, none.code], ['/components', 'missing_body']);
      const headerOnly = only(errorsOf({ components: [{ type: 'HEADER', format: 'TEXT', text: 'Hi' }] }));
      assert.equal(headerOnly.code, 'missing_body');
      const two = only(errorsOf({ components: [{ type: 'BODY', text: 'a' }, { type: 'BODY', text: 'b' }] }));
      assert.deepEqual([two.field, two.code], ['/components/1/type', 'duplicate_component']);
      assert.match(two.message, /\/components\/0 is already a BODY/);
    });

    it('allows at most one HEADER and one FOOTER', () => {
      const headers = only(
        errorsOf({
          components: [
            { type: 'BODY', text: 'a' },
            { type: 'HEADER', format: 'TEXT', text: 'h' },
            { type: 'HEADER', format: 'TEXT', text: 'h' },
          ],
        }),
      );
      assert.deepEqual([headers.field, headers.code], ['/components/2/type', 'duplicate_component']);
      const footers = only(
        errorsOf({ components: [{ type: 'FOOTER', text: 'f' }, { type: 'FOOTER', text: 'f' }, { type: 'BODY', text: 'a' }] }),
      );
      assert.deepEqual([footers.field, footers.code], ['/components/1/type', 'duplicate_component']);
    });

    it('rejects other component types, case included, and an empty BUTTONS', () => {
      const buttons = only(errorsOf({ components: [{ type: 'BODY', text: 'a' }, { type: 'BUTTONS', buttons: [] }] }));
      assert.deepEqual([buttons.field, buttons.code], ['/components/1/buttons', 'invalid_count']);
      for (const type of ['body', '', 'IMAGE']) {
        const errors = errorsOf({ components: [{ type: 'BODY', text: 'a' }, { type, text: 'x' }] });
        const error = only(errors);
        assert.deepEqual([error.field, error.code], ['/components/1/type', 'unknown_component_type'], type);
        assert.match(error.message, /use HEADER, BODY, FOOTER or BUTTONS/);
      }
    });

    it('takes a HEADER without format as TEXT, refuses other formats, and format elsewhere', () => {
      assert.deepEqual(errorsOf({ components: [{ type: 'HEADER', text: 'Order {{1}}' }, { type: 'BODY', text: 'a' }] }), []);
      // Still a text header: its text rules apply.
      const twoPlaceholders = only(errorsOf({ components: [{ type: 'HEADER', text: '{{1}} {{2}}' }, { type: 'BODY', text: 'a' }] }));
      assert.deepEqual([twoPlaceholders.field, twoPlaceholders.code], ['/components/0/text', 'too_many_placeholders']);
      for (const format of ['GIF', 'text', '']) {
        const bad = only(errorsOf({ components: [{ type: 'HEADER', format, text: 'h' }, { type: 'BODY', text: 'a' }] }));
        assert.deepEqual([bad.field, bad.code], ['/components/0/format', 'invalid_value'], format);
      }
      const onBody = only(errorsOf({ components: [{ type: 'BODY', format: 'TEXT', text: 'a' }] }));
      assert.deepEqual([onBody.field, onBody.code], ['/components/0/format', 'not_allowed']);
    });

    it('bounds text length per type, counting characters (code points)', () => {
      assert.deepEqual(bodyErrors('x'.repeat(1024)), []);
      assert.deepEqual(bodyErrors('😀'.repeat(1024)), []); // 2048 UTF-16 units, 1024 characters
      const long = only(bodyErrors('x'.repeat(1025)));
      assert.deepEqual([long.field, long.code], ['/components/0/text', 'too_long']);
      assert.match(long.message, /1025 characters long; a BODY allows at most 1024/);
      for (const type of ['HEADER', 'FOOTER'] as const) {
        const component = (text: string) => ({ type, text, ...(type === 'HEADER' && { format: 'TEXT' }) });
        assert.deepEqual(errorsOf({ components: [{ type: 'BODY', text: 'a' }, component('y'.repeat(60))] }), []);
        const error = only(errorsOf({ components: [{ type: 'BODY', text: 'a' }, component('y'.repeat(61))] }));
        assert.deepEqual([error.field, error.code], ['/components/1/text', 'too_long'], type);
      }
    });

    it('refuses empty or blank text', () => {
      for (const text of ['', '   ', '\n\t']) {
        const error = only(bodyErrors(text));
        assert.deepEqual([error.field, error.code], ['/components/0/text', 'too_short']);
      }
    });

    it('refuses broken Unicode and control characters, but allows newlines and tabs', () => {
      assert.deepEqual(bodyErrors('line one\nline two\r\n\tend — ünïcödé 中文 👍🏽'), []);
      assert.equal(only(bodyErrors('bad \ud800 surrogate')).code, 'invalid_unicode');
      assert.equal(only(bodyErrors('nul \u0000 byte')).code, 'invalid_character');
      assert.match(only(bodyErrors('bell \u0007')).message, /U\+0007/);
    });

    it('reports every broken component with its own pointer', () => {
      const errors = validateTemplate({
        name: 'Bad Name',
        language: 'xx-YY',
        category: 'NOPE',
        components: [
          { type: 'HEADER', format: 'TEXT', text: '{{1}} {{2}}' },
          { type: 'BODY', text: 'Hi {{2}}' },
          { type: 'FOOTER', text: 'bye {{1}}' },
        ],
      });
      assert.deepEqual(
        errors.map((error) => [error.field, error.code]),
        [
          ['/name', 'invalid_format'],
          ['/language', 'invalid_format'],
          ['/category', 'invalid_value'],
          ['/components/0/text', 'too_many_placeholders'],
          ['/components/1/text', 'placeholder_gap'],
          ['/components/2/text', 'placeholder_not_allowed'],
        ],
      );
    });
  });

  describe('placeholders', () => {
    it('must run 1..n without gaps in each component, repeats allowed', () => {
      assert.deepEqual(bodyErrors('a {{1}} b {{2}} c {{3}} d'), []);
      assert.deepEqual(bodyErrors('a {{2}} b {{1}} c'), [], 'order of appearance does not matter');
      assert.deepEqual(bodyErrors('a {{1}} b {{1}} c'), []);
      const gap = only(bodyErrors('a {{1}} b {{3}} c'));
      assert.equal(gap.code, 'placeholder_gap');
      assert.match(gap.message, /\{\{2\}\} is missing/);
      assert.match(only(bodyErrors('a {{2}} b {{4}}')).message, /\{\{1\}\}, \{\{3\}\} are missing/);
      // Numbering restarts per component: the HEADER's {{1}} is not the BODY's.
      assert.deepEqual(
        errorsOf({ components: [{ type: 'HEADER', format: 'TEXT', text: 'Hi {{1}}' }, { type: 'BODY', text: 'x {{1}} y' }] }),
        [],
      );
    });

    it('allows one placeholder in a HEADER and none in a FOOTER', () => {
      const header = (text: string) => errorsOf({ components: [{ type: 'HEADER', format: 'TEXT', text }, { type: 'BODY', text: 'b' }] });
      assert.deepEqual(header('Order {{1}}'), []);
      assert.equal(only(header('{{1}} and {{1}}')).code, 'too_many_placeholders');
      assert.equal(only(header('Order {{2}}')).code, 'placeholder_gap');
      const footer = only(errorsOf({ components: [{ type: 'FOOTER', text: 'by {{1}}' }, { type: 'BODY', text: 'b' }] }));
      assert.deepEqual([footer.field, footer.code], ['/components/0/text', 'placeholder_not_allowed']);
    });

    it('rejects every malformed form with a message saying how to write it', () => {
      const cases: [string, RegExp][] = [
        ['Hi {{0}}', /count from \{\{1\}\}, without leading zeros/],
        ['Hi {{01}}', /without leading zeros/],
        ['Hi {{ 1 }}', /has spaces; write \{\{1\}\}/],
        ['Hi {{name}}', /not a placeholder; placeholders are numbered/],
        ['Hi {{}}', /is empty/],
        ['Hi {{1}', /unbalanced braces/],
        ['Hi {1}}', /unbalanced braces/],
        ['Hi {{{1}}}', /unbalanced braces/],
        ['Hi {{1}}}', /unbalanced braces/],
        ['Hi {{ there', /unbalanced braces/],
        ['Hi }} there', /unbalanced braces/],
        ['Hi {1} there', /single braces; write \{\{1\}\}/],
        ['Hi {{-1}}', /not a placeholder/],
        ['Hi {{1.5}}', /not a placeholder/],
        ['Hi {{12345}}', /out of range/],
      ];
      for (const [text, message] of cases) {
        const error = only(bodyErrors(text));
        assert.equal(error.code, 'malformed_placeholder', text);
        assert.equal(error.field, '/components/0/text');
        assert.match(error.message, message, text);
      }
      assert.match(only(bodyErrors('{{a}} and {{b}}')).message, /\(and 1 more\)/);
    });

    it('leaves single braces around words as text', () => {
      assert.deepEqual(bodyErrors('Use code {SAVE10} at {{1}} today'), []);
      assert.deepEqual(parsePlaceholders('Use code {SAVE10} at {{1}} today'), [1]);
    });

    it('parses the distinct numbers used, ascending', () => {
      assert.deepEqual(parsePlaceholders('no placeholders'), []);
      assert.deepEqual(parsePlaceholders('{{2}} then {{1}} then {{2}}'), [1, 2]);
      assert.deepEqual(parsePlaceholders('{{10}}{{9}}'), [9, 10]);
      assert.deepEqual(parsePlaceholders('{{0}} {{ 1 }} {{a}} {{{3}}} {{4}}'), [4], 'malformed ones are not placeholders');
      assert.equal(placeholderCount('{{1}} {{2}} {{1}}'), 2);
      assert.equal(placeholderCount(''), 0);
      assert.deepEqual(findPlaceholders('ab{{1}}c'), [{ number: 1, key: '1', start: 2, end: 7 }]);
    });

    it('renders values in one pass, leaving what has no value', () => {
      assert.equal(renderText('Hello {{1}}, order {{2}}.', { '1': 'Ana', '2': '#42' }), 'Hello Ana, order #42.');
      assert.equal(renderText('{{1}} and {{1}}', { '1': 'x' }), 'x and x');
      assert.equal(renderText('{{1}} {{2}}', { '1': '{{2}}', '2': 'two' }), '{{2}} two', 'values are not expanded again');
      assert.equal(renderText('{{1}}', { '1': '$& $1 $$' }), '$& $1 $$', 'replacement patterns are literal');
      assert.equal(renderText('Hi {{1}} {{2}}', { '1': 'a' }), 'Hi a {{2}}');
      assert.equal(renderText('{note} {{ 1 }}', { '1': 'a' }), '{note} {{ 1 }}');
      assert.equal(renderText('{{1}}', Object.create({ '1': 'inherited' }) as Record<string, string>), '{{1}}');
      assert.equal(renderText('no placeholders', {}), 'no placeholders');
    });
  });
});

describe('sandbox review rules', () => {
  const body = (text: string, name = 'order_update') => sandboxReview({ name, components: [{ type: 'BODY', text }] });

  it('approves an ordinary template', () => {
    assert.deepEqual(body('Hello {{1}}, your order {{2}} has shipped.'), { status: 'APPROVED' });
    assert.deepEqual(body('No placeholders at all'), { status: 'APPROVED' });
  });

  it('rejects a name starting with reject_', () => {
    const check = body('Hello {{1}}, your order has shipped.', 'reject_me');
    assert.equal(check.status, 'REJECTED');
    assert.match(check.status === 'REJECTED' ? check.reason : '', /starts with "reject_"/);
    assert.equal(body('Hello there, all fine.', 'not_reject_me').status, 'APPROVED');
  });

  it('rejects a placeholder at the very start or end of the trimmed body', () => {
    const start = body('  {{1}} is your code, friend');
    assert.equal(start.status, 'REJECTED');
    assert.match(start.status === 'REJECTED' ? start.reason : '', /starts with the placeholder \{\{1\}\}/);
    const end = body('Your code is here, friend: {{1}}\n');
    assert.match(end.status === 'REJECTED' ? end.reason : '', /ends with the placeholder \{\{1\}\}/);
    assert.equal(body('Your code is here, friend: {{1}}.').status, 'APPROVED', 'punctuation after it is text');
  });

  it('approves short bodies with as many words as placeholders', () => {
    assert.deepEqual(body('Hello {{1}}!'), { status: 'APPROVED' });
    assert.deepEqual(body('Hi {{1}}, your code is {{2}}.'), { status: 'APPROVED' });
    // 2 placeholders and exactly 2 words: not more placeholders than words.
    assert.deepEqual(body('Hi {{1}} and {{2}}.'), { status: 'APPROVED' });
  });

  it('rejects more placeholders than words, with the counts in the reason', () => {
    const short = body('Code {{1}} {{2}} {{3}} now');
    assert.equal(short.status, 'REJECTED');
    assert.match(short.status === 'REJECTED' ? short.reason : '', /3 placeholder\(s\) need at least 3 words.*it has 2/);
    // Every use counts, and punctuation alone is not a word.
    assert.equal(body('Hi {{1}} {{1}} — !').status, 'REJECTED');
    assert.equal(body('Hi {{1}} {{1}} ok').status, 'APPROVED');
    assert.equal(wordCount('Hi  - , ok', []), 2);
    // A placeholder at the start is still the start rule's to reject.
    const start = body('{{1}} {{2}} {{3}} ok');
    assert.match(start.status === 'REJECTED' ? start.reason : '', /starts with the placeholder \{\{1\}\}/);
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { quickReplyTap } from '../../src/domain/quickReplyTap.ts';

const COMPONENTS = JSON.stringify([
  { type: 'BODY', text: 'Your appointment is tomorrow.' },
  {
    type: 'BUTTONS',
    buttons: [
      { type: 'QUICK_REPLY', text: 'Yes, confirm' },
      { type: 'QUICK_REPLY', text: 'Reschedule' },
      { type: 'URL', text: 'Track', url: 'https://example.com/{{1}}' },
    ],
  },
]);

describe('a tap on a quick reply', () => {
  it('carries the button’s text, and the payload the message was sent with, else the text', () => {
    assert.deepEqual(quickReplyTap(COMPONENTS, null, 0), { type: 'button', text: 'Yes, confirm', payload: 'Yes, confirm' });
    const sent = JSON.stringify({ buttons: [{ subType: 'url', index: '2', text: 'A-1' }, { subType: 'quick_reply', index: '1', payload: 'RESCHEDULE_42' }] });
    assert.deepEqual(quickReplyTap(COMPONENTS, sent, 1), { type: 'button', text: 'Reschedule', payload: 'RESCHEDULE_42' });
    assert.deepEqual(quickReplyTap(COMPONENTS, sent, 0), { type: 'button', text: 'Yes, confirm', payload: 'Yes, confirm' });
  });

  it('is nothing for another kind of button, a missing one, or unreadable JSON', () => {
    assert.equal(quickReplyTap(COMPONENTS, null, 2), undefined);
    assert.equal(quickReplyTap(COMPONENTS, null, 3), undefined);
    assert.equal(quickReplyTap(JSON.stringify([{ type: 'BODY', text: 'x' }]), null, 0), undefined);
    assert.equal(quickReplyTap('not json', null, 0), undefined);
    assert.deepEqual(quickReplyTap(COMPONENTS, '{oops', 0)?.payload, 'Yes, confirm');
  });
});

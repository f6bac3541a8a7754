import { Type } from 'typebox';
import type { MessageReplyRow } from '../db/messageReplies.ts';

// How the API shows a recipient's reply (CONTRACT §9): in a message's events and the sandbox's
// reply helper, the same `reply` object message.replied carries.

export const ReplyView = Type.Object(
  {
    type: Type.Union([Type.Literal('button'), Type.Literal('text')], {
      description: '`button`: a tap on a quick-reply button; `text`: a message written in reply.',
    }),
    text: Type.String({ description: 'The button’s text, or what the recipient wrote.' }),
    payload: Type.Optional(
      Type.String({ description: 'A button’s payload (the one the message was sent with, else the button’s text); never on text.' }),
    ),
  },
  { description: 'What the recipient answered.' },
);

export function replyView(row: Pick<MessageReplyRow, 'type' | 'text' | 'payload'>) {
  return {
    type: row.type as 'button' | 'text',
    text: row.text,
    ...(row.payload !== null && { payload: row.payload }),
  };
}

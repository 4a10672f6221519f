/** A captured exchange as the API answers it (spec 2.8, docs/capture.md): the server's schemas' types. */
import type { Static } from '@sinclair/typebox';
import type {
  MessageDetail,
  MessageListItem as MessageListItemOut,
  SharedListItem as SharedListItemOut,
  SharedMessage as SharedMessageOut,
} from '../../../../src/api/messages/schemas';

/** A list item: no headers, parameters, form fields or bodies. */
export type MessageListItem = Static<typeof MessageListItemOut>;
export type RequestSummary = NonNullable<MessageListItem['request']>;
export type ResponseSummary = NonNullable<MessageListItem['response']>;

export type Message = Static<typeof MessageDetail>;
export type MessageRequest = NonNullable<Message['request']>;
export type MessageResponse = NonNullable<Message['response']>;
export type SharedMessage = Static<typeof SharedMessageOut>;
/** An item of the Shared view, with the public link as `share_url`. */
export type SharedListItem = Static<typeof SharedListItemOut>;

export type Lists = MessageRequest['headers'];

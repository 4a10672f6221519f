import type { ListedMessage } from '../../domain/messages.js';

/** A list item as the API shows it. */
export function presentListItem(message: ListedMessage): ListedMessage {
  return message;
}

export function publicUrl(base: string, token: string): string {
  return `${base}/public/messages/${token}`;
}

export function problemWithLink(problem: { code: number; message: string }, moreInfo: string) {
  return { ...problem, more_info: `${moreInfo}#${problem.code}` };
}

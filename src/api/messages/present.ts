import type { StoredMessage } from '../../capture/message.js';

/** A message without its bodies, for lists. */
export function presentListItem(message: StoredMessage) {
  const { request, response, ...rest } = message;
  const strip = <T extends { body: string }>(part: T | null) => {
    if (part === null) return null;
    const { body: _body, ...meta } = part;
    return meta;
  };
  return { ...rest, request: strip(request), response: strip(response) };
}

export function publicUrl(base: string, token: string): string {
  return `${base}/public/messages/${token}`;
}

export function problemWithLink(problem: { code: number; message: string }, moreInfo: string) {
  return { ...problem, more_info: `${moreInfo}#${problem.code}` };
}

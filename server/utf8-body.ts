import { firstInvalidUtf8Offset } from '../src/core/utf8.js';

/**
 * A request body that is not well-formed UTF-8 (JSON bodies are UTF-8 whatever charset the
 * Content-Type names): refused with 400 naming the offending byte, instead of being decoded
 * with U+FFFD in place of the bytes, which would store text the client never sent.
 */
export class BodyNotUtf8Error extends Error {
  readonly statusCode = 400;
  readonly code = 'SVC_BODY_NOT_UTF8';

  constructor(readonly offset: number) {
    super(`request body is not valid UTF-8: invalid byte sequence at byte offset ${offset}`);
    this.name = 'BodyNotUtf8Error';
  }
}

const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as text, or a BodyNotUtf8Error naming the first bad byte. */
export function decodeUtf8Body(body: Buffer): string {
  try {
    return strict.decode(body);
  } catch {
    throw new BodyNotUtf8Error(Math.max(0, firstInvalidUtf8Offset(body)));
  }
}

/**
 * The offset where the first ill-formed UTF-8 sequence of `bytes` starts (RFC 3629: no
 * overlong forms, no UTF-16 surrogates, nothing above U+10FFFF, no truncated sequence, no stray
 * continuation byte), or -1 when all of it is well-formed. Lets a refusal say where it is.
 */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    if (b < 0x80) {
      i++;
      continue;
    }
    // Length of the sequence and the allowed range of its second byte (excludes overlongs,
    // surrogates and code points past U+10FFFF); every later byte is 0x80–0xBF.
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) length = 2;
    else if (b >= 0xe0 && b <= 0xef) {
      length = 3;
      if (b === 0xe0) low = 0xa0;
      if (b === 0xed) high = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      length = 4;
      if (b === 0xf0) low = 0x90;
      if (b === 0xf4) high = 0x8f;
    } else return i;
    for (let k = 1; k < length; k++) {
      const c = bytes[i + k];
      const [lo, hi] = k === 1 ? [low, high] : [0x80, 0xbf];
      // Cut short or broken: the sequence starting at its lead byte is the ill-formed one.
      if (c === undefined || c < lo || c > hi) return i;
    }
    i += length;
  }
  return -1;
}

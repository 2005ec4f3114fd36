import { Chalk, type ChalkInstance } from 'chalk';

/**
 * Text for a person's terminal. Anything the service answers may hold what a stored task was
 * given: an escape sequence that clears the screen or recolours the shell, a bell, a bidi
 * override that shows code in another order than it runs. Such characters are shown as
 * visible escapes (`\x1b`, `\u202e`) in everything the CLI prints for a person (JSON stays
 * exact). Our own colours must survive that, so the colour helper writes a per-process mark
 * where a colour code's ESC goes, and the last step before writing escapes the text and then
 * turns the marks back into ESC. No stored text can hold the mark: it is chosen at start-up.
 */

// C0 controls but tab and line feed, DEL, C1 controls, and the bidirectional formatting
// characters (ALM, LRM, RLM, the embeddings and overrides, the isolates).
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const ESC = '\x1b';
// Math.random, not node:crypto: every command would pay for loading crypto, and the mark only
// has to be unknown to text stored before this process started.
const MARK = `\ue000${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}\ue001`;
// One of our colour codes, marked (chalk's basic colours and styles are ESC [ n m).
const MARKED_CODE = new RegExp(`${MARK}\\[[0-9;]*m`, 'g');

function visibleEscape(ch: string): string {
  const code = ch.charCodeAt(0);
  return code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** `text` with every control and bidi formatting character written as a visible escape. */
export function escapeControls(text: string): string {
  return text.replace(UNSAFE, visibleEscape);
}

/** What goes to the terminal: controls escaped, then our own colour marks made colour again. */
export function forTerminal(text: string): string {
  return escapeControls(text).split(MARK).join(ESC);
}

/** How many characters `text` takes on screen once printed (colour codes take none). */
export function displayWidth(text: string): number {
  return escapeControls(text).replace(MARKED_CODE, '').length;
}

/**
 * A chalk whose codes are marked rather than raw (see above). What it is given is escaped
 * first, so an ESC from the service inside a coloured cell stays text, while colours nested
 * inside it (marked) reach chalk as colour codes and keep its nesting rules.
 */
function marked(chalk: ChalkInstance): ChalkInstance {
  // The proxy stands in front of an empty function, not of chalk itself: chalk caches its
  // builders as read-only properties, which a proxy of it would have to return unwrapped.
  const stand = (() => undefined) as unknown as ChalkInstance;
  return new Proxy(stand, {
    apply(_target, _this, args: unknown[]) {
      const safe = args.map((a) => (typeof a === 'string' ? escapeControls(a).split(MARK).join(ESC) : a));
      const styled: unknown = Reflect.apply(chalk, undefined, safe);
      // A builder-making call (`c.hex('#f80')`) answers a builder: mark that one too.
      if (typeof styled === 'function') return marked(styled as ChalkInstance);
      return typeof styled === 'string' ? styled.split(ESC).join(MARK) : styled;
    },
    get(_target, prop) {
      const value: unknown = Reflect.get(chalk, prop, chalk);
      return typeof value === 'function' ? marked(value as ChalkInstance) : value;
    },
    set(_target, prop, value) {
      return Reflect.set(chalk, prop, value, chalk);
    },
  });
}

/** The colours of a terminal stream: basic colours when `enabled`, none otherwise. */
export function terminalColor(enabled: boolean): ChalkInstance {
  return marked(new Chalk({ level: enabled ? 1 : 0 }));
}

/**
 * The reference system's client puts a pattern key in the path unencoded
 * (`DELETE /v1/patterns/patterns/<id>`; its server routes `{pattern_key:path}`). Our routes take
 * the key as one segment (`patterns%2F<id>`), so before routing the unencoded form of the
 * pattern routes is rewritten into it: GET and DELETE /v1/patterns/patterns/<id> and PUT
 * /v1/governance/patterns/patterns/<id>/classify. Only `patterns/` followed by one segment is
 * taken: `..` becomes an invalid key (422) and any other prefix finds no route (404).
 */
const UNENCODED_KEY_PATHS = [
  /^(\/v1\/patterns\/)patterns\/([^/?#]+)(\/?(?:\?.*)?)$/,
  /^(\/v1\/governance\/patterns\/)patterns\/([^/?#]+)(\/classify\/?(?:\?.*)?)$/,
];

/** The URL to route: the encoded-key form for the reference's unencoded one, else `url` itself. */
export function routableUrl(url: string): string {
  for (const pattern of UNENCODED_KEY_PATHS) {
    const m = pattern.exec(url);
    if (m) return `${m[1]}patterns%2F${m[2]}${m[3]}`;
  }
  return url;
}

import { useEffect, useState } from 'preact/hooks';

/**
 * Hash routes (`#/patterns?classification=public`), so every screen is a link that can be
 * shared and the server serves one page. Nothing in a route is ever sent to the server by the
 * router; the API key never appears in one.
 */
export interface Route {
  path: string[];
  query: URLSearchParams;
}

export function currentRoute(): Route {
  const hash = location.hash.replace(/^#\/?/, '');
  const [pathPart, queryPart = ''] = hash.split('?', 2);
  const path = pathPart.split('/').filter(Boolean).map(decodeURIComponent);
  return { path: path.length > 0 ? path : ['patterns'], query: new URLSearchParams(queryPart) };
}

export function href(path: string[], query: Record<string, string | undefined> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value) params.set(name, value);
  const text = params.toString();
  return `#/${path.map(encodeURIComponent).join('/')}${text ? `?${text}` : ''}`;
}

export function navigate(path: string[], query: Record<string, string | undefined> = {}): void {
  location.hash = href(path, query);
}

export function useRoute(): Route {
  const [state, setState] = useState(() => ({ hash: location.hash, route: currentRoute() }));
  useEffect(() => {
    const changed = () => setState({ hash: location.hash, route: currentRoute() });
    addEventListener('hashchange', changed);
    // The listener starts after the first paint: a link followed in between (the page opened,
    // then sent to a run's hash at once) changed the hash unheard, so catch up now.
    if (location.hash !== state.hash) changed();
    return () => removeEventListener('hashchange', changed);
  }, []);
  return state.route;
}

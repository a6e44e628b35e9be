import { NextResponse, type NextRequest } from 'next/server';
import { checkSameOrigin, loopbackHosts } from './lib/same-origin-guard';

// The example listens on 127.0.0.1 only, on PORT (the launcher sets it), and answers its own page only.
const hosts = loopbackHosts(Number(process.env.PORT ?? 3000));

/**
 * Every request passes the same-origin guard first: the chat routes start runs and sign approval
 * decisions with the workers' secret, so another site's page (or a DNS-rebound name) gets 403.
 */
export function proxy(request: NextRequest): NextResponse {
  const refusal = checkSameOrigin(request.method, request.headers, hosts);
  if (refusal === undefined) return NextResponse.next();
  return NextResponse.json({ error: 'Refused', message: refusal.message }, { status: refusal.status });
}

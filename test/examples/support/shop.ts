import http from 'node:http';

/**
 * The small shop API the example scripts talk to, on 127.0.0.1: `/api/items` (examples/quickstart.js),
 * `POST /api/login` -> `{token}`, `POST /api/logout` -> 204, `GET /api/products[/:id]`,
 * `POST /api/cart` -> 201, `POST /api/checkout` -> `{orderId}`. The calls that need a session
 * answer 401 without a token it gave out. Every request is counted by method and route.
 */
export interface Shop {
  url: string;
  /** Requests per `METHOD /route` (`GET /api/products/:id` for every product). */
  counts: Map<string, number>;
  /** Usernames that logged in, in order. */
  logins: string[];
  stop(): Promise<void>;
}

const PRODUCTS = Array.from({ length: 8 }, (_, i) => ({
  id: i + 1,
  name: `product ${i + 1}`,
  price: 10 + i,
}));

async function body(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  let text = '';
  for await (const chunk of req) text += chunk;
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Starts the shop on a free port of 127.0.0.1. */
export async function startShop(): Promise<Shop> {
  const counts = new Map<string, number>();
  const logins: string[] = [];
  const sessions = new Set<string>();
  let orders = 0;
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://shop');
    const route = url.pathname.replace(/^\/api\/products\/\d+$/, '/api/products/:id');
    const key = `${req.method} ${route}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    const send = (status: number, value?: unknown) => {
      if (value === undefined) res.writeHead(status).end();
      else res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    };
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const authorised = token !== undefined && sessions.has(token);
    switch (key) {
      case 'GET /api/items':
        return send(200, { items: [1, 2, 3] });
      case 'POST /api/login': {
        const { username, password } = await body(req);
        if (typeof username !== 'string' || !password) return send(400, { error: 'username and password' });
        logins.push(username);
        const issued = `t-${logins.length}-${username}`;
        sessions.add(issued);
        return send(200, { token: issued });
      }
      case 'POST /api/logout':
        if (!authorised) return send(401, { error: 'no session' });
        sessions.delete(token);
        return send(204);
      case 'GET /api/products':
        return send(200, PRODUCTS);
      case 'GET /api/products/:id': {
        const product = PRODUCTS.find((p) => `/api/products/${p.id}` === url.pathname);
        return product ? send(200, product) : send(404, { error: 'no such product' });
      }
      case 'POST /api/cart':
        if (!authorised) return send(401, { error: 'no session' });
        await body(req);
        return send(201, { items: 1 });
      case 'POST /api/checkout':
        if (!authorised) return send(401, { error: 'no session' });
        return send(200, { orderId: ++orders });
      default:
        return send(404, { error: 'not found' });
    }
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    logins,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

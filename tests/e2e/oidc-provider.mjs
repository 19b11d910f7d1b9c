// A real OpenID provider for the tests: `oidc-provider` (the certified Node implementation), with two clients
// and three people, its own login page (dev interactions: the login is checked against the people below, any
// password), authorization code flow with PKCE required.
//
//   node oidc-provider.mjs REDIRECT_URI
//
// prints one JSON line `{"issuer": ...}` once it listens on 127.0.0.1 (a port of its own), and serves until
// killed. OIDC_MINT=audience|expired makes the provider sign, in place of each ID token it issues, the same
// claims for another audience or already expired (with its own key): what a token meant for another application,
// or an old one replayed, looks like to the client.
import http from 'node:http';
import Provider from 'oidc-provider';
import * as jose from 'jose';

const redirectUri = process.argv[2];
if (!redirectUri) {
  console.error('usage: node oidc-provider.mjs REDIRECT_URI');
  process.exit(2);
}
const mint = process.env.OIDC_MINT ?? '';

const PEOPLE = {
  alice: { name: 'Alice Example', preferred_username: 'alice', email: 'alice@example.test', groups: ['trove-owners'] },
  bob: { name: 'Bob Example', preferred_username: 'bob', email: 'bob@example.test', groups: ['staff'] },
  carol: { name: 'Carol Example', preferred_username: 'carol', email: 'alice@example.test', groups: ['trove-viewers'] },
};

const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
const jwk = { ...(await jose.exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' };

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const client = (id) => ({
  client_id: id,
  client_secret: `${id}-secret`,
  redirect_uris: [redirectUri],
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
});

const provider = new Provider(issuer, {
  clients: [client('trove'), client('other-app')],
  jwks: { keys: [jwk] },
  cookies: { keys: ['a test cookie key'] },
  claims: {
    openid: ['sub'],
    profile: ['name', 'preferred_username'],
    email: ['email'],
    groups: ['groups'],
  },
  scopes: ['openid', 'profile', 'email', 'groups'],
  // Scope claims go into the ID token (Trove reads the groups from it).
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  ttl: { AuthorizationCode: 60, IdToken: 3600, AccessToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
  async findAccount(_ctx, id) {
    const person = PEOPLE[id];
    return person && { accountId: id, claims: async () => ({ sub: id, ...person }) };
  },
  // A first-party client: no consent page, the scopes asked for are granted.
  async loadExistingGrant(ctx) {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId,
      accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope('openid profile email groups');
    await grant.save();
    return grant;
  },
});

if (mint) {
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path === '/token' && ctx.body && ctx.body.id_token) {
      const claims = jose.decodeJwt(ctx.body.id_token);
      if (mint === 'audience') claims.aud = 'other-app';
      if (mint === 'expired') {
        claims.iat -= 7200;
        claims.exp = claims.iat + 600;
      }
      ctx.body.id_token = await new jose.SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: jwk.kid, typ: 'JWT' })
        .sign(privateKey);
    }
  });
}

server.on('request', provider.callback());
console.log(JSON.stringify({ issuer }));

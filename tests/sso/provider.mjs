// A real OpenID provider for the tests: the certified `oidc-provider` package, configured
// here and nothing more. Environment: PORT, CLIENT_ID, CLIENT_SECRET, REDIRECT_URIS (comma-
// separated). Tests steer it through two test-only routes:
//   POST /test/next-login {"sub", "email", "email_verified"}: the person the next login is;
//   POST /test/tamper {"mode": null|"signature"|"audience"|"nonce"|"issuer"|"expired"}:
//     how the ID token in the next token answers is altered (re-signed with the provider's
//     own key, except for "signature"), to show the client refuses it.
// Interactions (login, consent) complete at once as that person: there is no form to fill.
import { generateKeyPairSync, randomUUID } from 'node:crypto';
import Provider from 'oidc-provider';
import * as jose from 'jose';

const port = Number(process.env.PORT);
const issuer = `http://127.0.0.1:${port}`;

function rsaKey() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { ...privateKey.export({ format: 'jwk' }), kid: 'test-key', alg: 'RS256', use: 'sig' };
}
const signingKey = rsaKey();
const otherKey = rsaKey();

const people = new Map();
let nextLogin = null;
let tamper = null;

const provider = new Provider(issuer, {
  clients: [{
    client_id: process.env.CLIENT_ID,
    client_secret: process.env.CLIENT_SECRET,
    redirect_uris: process.env.REDIRECT_URIS.split(','),
    grant_types: ['authorization_code'],
    response_types: ['code'],
  }],
  jwks: { keys: [signingKey] },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  scopes: ['openid', 'email', 'profile'],
  pkce: { required: () => true },
  features: { devInteractions: { enabled: false } },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: (ctx, id) => {
    const person = people.get(id);
    if (!person) return undefined;
    return { accountId: id, claims: () => ({ sub: id, ...person }) };
  },
  cookies: { keys: [randomUUID()] },
});

async function body(ctx) {
  const chunks = [];
  for await (const chunk of ctx.req) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString() || 'null');
}

async function altered(idToken) {
  const claims = jose.decodeJwt(idToken);
  const changes = {
    audience: { aud: 'someone-else' },
    nonce: { nonce: 'not-the-nonce' },
    issuer: { iss: 'http://127.0.0.1:1' },
    expired: { exp: Math.floor(Date.now() / 1000) - 600, iat: Math.floor(Date.now() / 1000) - 1200 },
    signature: {},
  }[tamper];
  const key = await jose.importJWK(tamper === 'signature' ? otherKey : signingKey, 'RS256');
  return new jose.SignJWT({ ...claims, ...changes })
    .setProtectedHeader({ alg: 'RS256', kid: 'test-key', typ: 'JWT' })
    .sign(key);
}

provider.use(async (ctx, next) => {
  if (ctx.method === 'POST' && ctx.path === '/test/next-login') {
    const person = await body(ctx);
    const { sub, ...claims } = person;
    people.set(sub, claims);
    nextLogin = sub;
    ctx.status = 204;
    return;
  }
  if (ctx.method === 'POST' && ctx.path === '/test/tamper') {
    tamper = (await body(ctx)).mode;
    ctx.status = 204;
    return;
  }
  if (ctx.method === 'GET' && ctx.path.startsWith('/interaction/')) {
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.prompt.name === 'login') {
      await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: nextLogin } },
        { mergeWithLastSubmission: false });
    } else {
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: details.session.accountId,
                                clientId: details.params.client_id });
      grant.addOIDCScope('openid email profile');
      const grantId = await grant.save();
      await provider.interactionFinished(ctx.req, ctx.res, { consent: { grantId } },
        { mergeWithLastSubmission: true });
    }
    ctx.respond = false;
    return;
  }
  await next();
  if (ctx.path === '/token' && tamper && ctx.body && ctx.body.id_token) {
    ctx.body = { ...ctx.body, id_token: await altered(ctx.body.id_token) };
  }
});

provider.listen(port, '127.0.0.1', () => {
  process.stdout.write(`listening ${issuer}\n`);
});

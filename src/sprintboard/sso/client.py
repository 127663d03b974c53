"""The OpenID Connect relying party (contract §19): the authorization code flow with PKCE
(S256), `state` and `nonce`, through Authlib; the ID token verified with joserfc against the
issuer's JWKS (`iss`, `aud`, `exp`, `nonce`, the signature). No JOSE of our own.

The issuer's discovery document and keys are read over HTTPS (plain HTTP only on a loopback
host, for development and tests: `addresses.is_loopback_url`) and kept for an hour; keys are
read again at once when a token names a key not among them (the issuer rotated its keys).
"""

import time
from dataclasses import dataclass, field
from typing import Any

import httpx
from authlib.common.security import generate_token
from authlib.integrations.httpx_client import AsyncOAuth2Client
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from sprintboard.addresses import is_loopback_url

SCOPE = "openid email profile"
CACHE_SECONDS = 3600.0
TIMEOUT = 10.0
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"]


class BadResponse(Exception):
    """What the issuer answered (or signed) is not acceptable: nobody is signed in."""


@dataclass(frozen=True, slots=True)
class Login:
    """What the browser that began a login keeps (sealed, in a cookie) for its callback."""

    state: str
    nonce: str
    verifier: str


@dataclass
class OidcClient:
    issuer: str
    client_id: str
    client_secret: str
    _discovery: tuple[float, dict[str, Any]] | None = field(default=None, repr=False)
    _keys: tuple[float, KeySet] | None = field(default=None, repr=False)

    def __repr__(self) -> str:  # (never the secret)
        return f"OidcClient({self.issuer!r}, {self.client_id!r})"

    def _oauth(self, redirect_uri: str) -> AsyncOAuth2Client:
        return AsyncOAuth2Client(
            client_id=self.client_id,
            client_secret=self.client_secret,
            redirect_uri=redirect_uri,
            scope=SCOPE,
            code_challenge_method="S256",
            timeout=TIMEOUT,
            trust_env=False,
        )

    async def _get(self, url: str) -> dict[str, Any]:
        _require_secure(url)
        async with httpx.AsyncClient(timeout=TIMEOUT, trust_env=False) as http:
            response = await http.get(url, headers={"accept": "application/json"})
        if response.status_code != 200:
            raise BadResponse(f"{url} answered {response.status_code}")
        document = response.json()
        if not isinstance(document, dict):
            raise BadResponse(f"{url} did not answer a JSON object")
        return document

    async def discovery(self) -> dict[str, Any]:
        if self._discovery is not None and self._discovery[0] > time.monotonic():
            return self._discovery[1]
        document = await self._get(f"{self.issuer}/.well-known/openid-configuration")
        if document.get("issuer") != self.issuer:
            raise BadResponse("the discovery document names another issuer")
        for name in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(document.get(name), str):
                raise BadResponse(f"the discovery document has no {name}")
        self._discovery = (time.monotonic() + CACHE_SECONDS, document)
        return document

    async def _key_set(self, *, fresh: bool) -> KeySet:
        if not fresh and self._keys is not None and self._keys[0] > time.monotonic():
            return self._keys[1]
        document = await self.discovery()
        try:
            keys = KeySet.import_key_set(await self._get(document["jwks_uri"]))  # type: ignore[arg-type]
        except (JoseError, ValueError, TypeError, KeyError) as error:
            raise BadResponse(f"the issuer's keys could not be read: {error}") from None
        self._keys = (time.monotonic() + CACHE_SECONDS, keys)
        return keys

    async def begin(self, redirect_uri: str) -> tuple[str, Login]:
        """The authorization URL to send the browser to, and what its callback must match."""
        document = await self.discovery()
        login = Login(
            state=generate_token(32), nonce=generate_token(32), verifier=generate_token(48)
        )
        async with self._oauth(redirect_uri) as oauth:
            url, _ = oauth.create_authorization_url(
                document["authorization_endpoint"],
                state=login.state,
                nonce=login.nonce,
                code_verifier=login.verifier,
            )
        return url, login

    async def finish(self, *, redirect_uri: str, code: str, login: Login) -> dict[str, Any]:
        """Exchanges `code` and answers the verified ID token's claims (with `email` and
        `email_verified` from the userinfo endpoint when the ID token leaves them out)."""
        document = await self.discovery()
        _require_secure(document["token_endpoint"])
        async with self._oauth(redirect_uri) as oauth:
            try:
                token = await oauth.fetch_token(
                    document["token_endpoint"],
                    grant_type="authorization_code",
                    code=code,
                    code_verifier=login.verifier,
                )
            except Exception as error:  # (Authlib's OAuthError, httpx's errors, bad JSON)
                raise BadResponse(f"the code was not exchanged: {type(error).__name__}") from None
            id_token = token.get("id_token")
            if not isinstance(id_token, str):
                raise BadResponse("the token answer has no ID token")
            claims = await self._verified(id_token, nonce=login.nonce)
            if "email" not in claims and isinstance(document.get("userinfo_endpoint"), str):
                claims = {**claims, **await self._userinfo(oauth, document, claims["sub"])}
        return claims

    async def _verified(self, id_token: str, *, nonce: str) -> dict[str, Any]:
        keys = await self._key_set(fresh=False)
        try:
            try:
                decoded = jwt.decode(id_token, keys, algorithms=ALGORITHMS)
            except (ValueError, JoseError) as error:
                if "kid" not in str(error).lower() and "key" not in type(error).__name__.lower():
                    raise
                decoded = jwt.decode(
                    id_token, await self._key_set(fresh=True), algorithms=ALGORITHMS
                )
            jwt.JWTClaimsRegistry(
                leeway=60,
                iss={"essential": True, "value": self.issuer},
                aud={"essential": True, "value": self.client_id},
                exp={"essential": True},
                sub={"essential": True},
                nonce={"essential": True, "value": nonce},
            ).validate(decoded.claims)
        except (ValueError, JoseError) as error:
            raise BadResponse(f"the ID token is not valid: {type(error).__name__}") from None
        return dict(decoded.claims)

    async def _userinfo(
        self, oauth: AsyncOAuth2Client, document: dict[str, Any], subject: str
    ) -> dict[str, Any]:
        _require_secure(document["userinfo_endpoint"])
        response = await oauth.get(document["userinfo_endpoint"])
        info = response.json() if response.status_code == 200 else None
        if not isinstance(info, dict) or info.get("sub") != subject:
            raise BadResponse("the userinfo answer is not about the signed-in subject")
        return {key: info[key] for key in ("email", "email_verified", "name") if key in info}


def _require_secure(url: str) -> None:
    if not (url.startswith("https://") or is_loopback_url(url)):
        raise BadResponse("the issuer's endpoints must be https://")

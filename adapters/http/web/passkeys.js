// @ts-check
// Passkeys in the browser: the WebAuthn ceremonies against Trove's passkey routes. The server's options carry
// binary values (challenge, user id, credential ids) in base64url; the browser's API takes and gives
// ArrayBuffers, so both directions are converted here. Nothing is kept in the page: the ceremony id goes back
// to the server with the credential, and signing in answers the session cookie.

import { api, ApiError } from "./api.js";

/** Whether this browser can make and use passkeys here (a secure context: https, or http://localhost). */
export function passkeysSupported() {
  return Boolean(window.isSecureContext && window.PublicKeyCredential && navigator.credentials);
}

/** base64url (no padding) -> ArrayBuffer. */
export function fromBase64url(text) {
  const b64 = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  return bytes.buffer;
}

/** ArrayBuffer (or a view of one) -> base64url without padding. */
export function toBase64url(buffer) {
  const bytes = buffer instanceof ArrayBuffer ? new Uint8Array(buffer) : new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A copy of `obj` without its null members (WebAuthn's dictionaries take a missing member, not null). */
function withoutNulls(obj) {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== null && v !== undefined));
}

function credentialList(list) {
  return (list || []).map((c) => ({ ...withoutNulls(c), id: fromBase64url(c.id) }));
}

/** The server's creation options, ready for `navigator.credentials.create()`. */
function creationOptions({ publicKey }) {
  const o = withoutNulls(publicKey);
  o.challenge = fromBase64url(publicKey.challenge);
  o.user = { ...publicKey.user, id: fromBase64url(publicKey.user.id) };
  o.excludeCredentials = credentialList(publicKey.excludeCredentials);
  if (o.authenticatorSelection) o.authenticatorSelection = withoutNulls(o.authenticatorSelection);
  return { publicKey: o };
}

/** The server's request options, ready for `navigator.credentials.get()`. */
function requestOptions({ publicKey }) {
  const o = withoutNulls(publicKey);
  o.challenge = fromBase64url(publicKey.challenge);
  o.allowCredentials = credentialList(publicKey.allowCredentials);
  return { publicKey: o };
}

/** A new credential as the server reads it. */
function registrationJson(c) {
  return {
    id: c.id,
    rawId: toBase64url(c.rawId),
    type: c.type,
    response: {
      attestationObject: toBase64url(c.response.attestationObject),
      clientDataJSON: toBase64url(c.response.clientDataJSON),
    },
  };
}

/** A sign-in's assertion as the server reads it. */
function assertionJson(c) {
  return {
    id: c.id,
    rawId: toBase64url(c.rawId),
    type: c.type,
    response: {
      authenticatorData: toBase64url(c.response.authenticatorData),
      clientDataJSON: toBase64url(c.response.clientDataJSON),
      signature: toBase64url(c.response.signature),
      userHandle: c.response.userHandle ? toBase64url(c.response.userHandle) : null,
    },
  };
}

/** The browser's refusal (cancelled, timed out, no authenticator) as an error the page explains. */
function browserRefusal(err) {
  if (err instanceof ApiError) return err;
  const why = err?.name === "NotAllowedError" ? "the passkey was cancelled or timed out" : err?.message || String(err);
  return new Error(`No passkey: ${why}`);
}

async function ceremony(start, body, make, toJson, finish) {
  if (!passkeysSupported()) throw new Error("This browser cannot use passkeys here (passkeys need https, or http://localhost)");
  const begun = await api(start, { method: "POST", body });
  let credential;
  try {
    credential = await make(begun.options);
  } catch (err) {
    throw browserRefusal(err);
  }
  return api(finish, { method: "POST", body: { ceremony: begun.ceremony, credential: toJson(credential) } });
}

const create = (options) => navigator.credentials.create(/** @type {CredentialCreationOptions} */ (creationOptions(options)));
const get = (options) => navigator.credentials.get(/** @type {CredentialRequestOptions} */ (requestOptions(options)));

/** Signs up from an invitation with a new passkey: answers `{member}` (the cookie is set). */
export function signUpWithPasskey(code, name) {
  return ceremony("/invitations/accept/passkey/start", { code, name }, create, registrationJson, "/invitations/accept/passkey/finish");
}

/** Signs in as `name` with one of their passkeys: answers `{member}` (the cookie is set). */
export function signInWithPasskey(name) {
  return ceremony("/session/passkey/start", { name }, get, assertionJson, "/session/passkey/finish");
}

/** Adds a passkey called `name` to the signed-in member: answers it. */
export function addPasskey(name) {
  return ceremony("/passkeys/start", { name }, create, registrationJson, "/passkeys/finish");
}

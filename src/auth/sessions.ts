import type { FastifyReply, FastifyRequest } from 'fastify';
import { hashSecret, newSecret, nowSeconds, sameSecret } from '../domain/ids.js';
import { sessionsRepo } from '../store/repositories/sessions.js';
import type { Store } from '../store/store.js';

export const SESSION_COOKIE = 'vigil_session';
/** Double-submit CSRF cookie of the forms shown before a session exists (sign-in, sign-up). */
export const CSRF_COOKIE = 'vigil_csrf';
export const SESSION_SECONDS = 14 * 24 * 60 * 60;

export interface Session {
  accountId: string;
  csrfToken: string;
}

/** The cookies of a request, by name; a malformed or repeated cookie keeps its first value. */
export function readCookies(request: FastifyRequest): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const name = part.slice(0, at).trim();
    if (!name || cookies.has(name)) continue;
    try {
      cookies.set(name, decodeURIComponent(part.slice(at + 1).trim()));
    } catch {
      // A value with a broken percent-escape is not one of ours.
    }
  }
  return cookies;
}

/** A `Set-Cookie` value: HttpOnly, SameSite=Lax, Path=/, Secure when the site is https. */
export function cookieHeader(
  name: string,
  value: string,
  options: { secure: boolean; maxAge: number },
): string {
  return [
    `${name}=${encodeURIComponent(value)}`,
    'Path=/',
    `Max-Age=${options.maxAge}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
}

/** Adds a `Set-Cookie` header, keeping those already set on the reply. */
export function addCookie(reply: FastifyReply, header: string): void {
  const existing = reply.getHeader('set-cookie');
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing : [String(existing)];
  reply.header('set-cookie', [...list, header]);
}

/** Whether `submitted` is the expected CSRF token, compared in constant time. */
export function checkCsrf(session: Pick<Session, 'csrfToken'> | null, submitted: unknown): boolean {
  if (!session || typeof submitted !== 'string' || submitted === '') return false;
  return sameSecret(session.csrfToken, submitted);
}

/**
 * Browser sessions of the web pages: a random 256-bit id in an HttpOnly cookie, kept in
 * `web_sessions` only as its SHA-256, valid for 14 days. Each session has its own CSRF token.
 */
export class SessionService {
  constructor(private readonly deps: { store: Store; secureCookies: boolean }) {}

  /** The session the request's cookie names, unless unknown or expired. */
  async current(request: FastifyRequest): Promise<Session | null> {
    const id = readCookies(request).get(SESSION_COOKIE);
    if (!id) return null;
    const row = await sessionsRepo.findLive(this.deps.store.db, hashSecret(id), nowSeconds());
    return row ? { accountId: row.account_id, csrfToken: row.csrf_token } : null;
  }

  /** Starts a session for the account and sets its cookie on the reply. */
  async create(reply: FastifyReply, accountId: string): Promise<Session> {
    const id = newSecret();
    const csrfToken = newSecret();
    const now = nowSeconds();
    const { db } = this.deps.store;
    await sessionsRepo.deleteExpired(db, now);
    await sessionsRepo.insert(db, {
      idHash: hashSecret(id),
      accountId,
      csrfToken,
      createdAt: now,
      expiresAt: now + SESSION_SECONDS,
    });
    addCookie(
      reply,
      cookieHeader(SESSION_COOKIE, id, { secure: this.deps.secureCookies, maxAge: SESSION_SECONDS }),
    );
    return { accountId, csrfToken };
  }

  /** Ends the request's session, if any, and clears its cookie. */
  async destroy(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const id = readCookies(request).get(SESSION_COOKIE);
    if (id) await sessionsRepo.delete(this.deps.store.db, hashSecret(id));
    addCookie(reply, cookieHeader(SESSION_COOKIE, '', { secure: this.deps.secureCookies, maxAge: 0 }));
  }

  /** Sets a cookie with the deployment's flags (Secure on https). */
  setCookie(reply: FastifyReply, name: string, value: string, maxAge: number): void {
    addCookie(reply, cookieHeader(name, value, { secure: this.deps.secureCookies, maxAge }));
  }
}

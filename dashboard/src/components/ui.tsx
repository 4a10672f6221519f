import type { ComponentChildren, JSX } from 'preact';
import { useId } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { ApiError, fieldError, messageOf } from '../api/client';

/** A page's title row, with actions on the right. */
export function PageHeader(props: {
  title: ComponentChildren;
  subtitle?: ComponentChildren;
  actions?: ComponentChildren;
}) {
  return (
    <div class="page-header">
      <div>
        <h1>{props.title}</h1>
        {props.subtitle && <p class="muted">{props.subtitle}</p>}
      </div>
      {props.actions && <div class="actions">{props.actions}</div>}
    </div>
  );
}

/** An error from the API or the network; says which field when it names one the view does not show. */
export function ErrorBanner(props: { error: unknown; onRetry?: () => void }) {
  if (!props.error) return null;
  const field = props.error instanceof ApiError && props.error.field ? props.error.field : undefined;
  return (
    <div class="banner error" role="alert">
      <span>
        {messageOf(props.error)}
        {field && <span class="muted"> ({field})</span>}
      </span>
      {props.onRetry && (
        <button type="button" class="link" onClick={props.onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function Notice(props: { children: ComponentChildren; kind?: 'info' | 'success' | 'warning' }) {
  return (
    <div class={`banner ${props.kind ?? 'info'}`} role="status">
      {props.children}
    </div>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <p class="loading" role="status" aria-live="polite">
      {props.label ?? 'Loading…'}
    </p>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <div class="empty">{props.children}</div>;
}

type InputProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'label' | 'onInput' | 'value'>;

/**
 * A labelled text input. `error` is the API error of the last save: its message shows under the
 * field when it names `field` (a JSON pointer such as `/steps/0/url`).
 */
export function TextField(
  props: InputProps & {
    label: ComponentChildren;
    value: string;
    onValue: (value: string) => void;
    error?: unknown;
    field?: string;
    hint?: ComponentChildren;
    hideLabel?: boolean;
  },
) {
  const { label, value, onValue, error, field, hint, hideLabel, ...rest } = props;
  const id = useId();
  const message = field ? fieldError(error, field) : undefined;
  return (
    <div class={`field${message ? ' invalid' : ''}`}>
      <label for={id} class={hideLabel ? 'visually-hidden' : undefined}>
        {label}
      </label>
      <input
        id={id}
        value={value}
        onInput={(event) => onValue(event.currentTarget.value)}
        aria-invalid={message ? true : undefined}
        aria-describedby={message ? `${id}-error` : hint ? `${id}-hint` : undefined}
        {...rest}
      />
      {hint && !message && (
        <small id={`${id}-hint`} class="muted">
          {hint}
        </small>
      )}
      {message && (
        <small id={`${id}-error`} class="field-error">
          {message}
        </small>
      )}
    </div>
  );
}

export function TextArea(props: {
  label: ComponentChildren;
  value: string;
  onValue: (value: string) => void;
  error?: unknown;
  field?: string;
  rows?: number;
  placeholder?: string;
}) {
  const id = useId();
  const message = props.field ? fieldError(props.error, props.field) : undefined;
  return (
    <div class={`field${message ? ' invalid' : ''}`}>
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        rows={props.rows ?? 3}
        value={props.value}
        placeholder={props.placeholder}
        onInput={(event) => props.onValue(event.currentTarget.value)}
        aria-invalid={message ? true : undefined}
        aria-describedby={message ? `${id}-error` : undefined}
      />
      {message && (
        <small id={`${id}-error`} class="field-error">
          {message}
        </small>
      )}
    </div>
  );
}

export function SelectField<T extends string>(props: {
  label: ComponentChildren;
  value: T;
  options: readonly (T | { value: T; label: string })[];
  onValue: (value: T) => void;
  error?: unknown;
  field?: string;
  hideLabel?: boolean;
  disabled?: boolean;
}) {
  const id = useId();
  const message = props.field ? fieldError(props.error, props.field) : undefined;
  return (
    <div class={`field${message ? ' invalid' : ''}`}>
      <label for={id} class={props.hideLabel ? 'visually-hidden' : undefined}>
        {props.label}
      </label>
      <select
        id={id}
        value={props.value}
        disabled={props.disabled}
        onChange={(event) => props.onValue(event.currentTarget.value as T)}
        aria-invalid={message ? true : undefined}
        aria-describedby={message ? `${id}-error` : undefined}
      >
        {props.options.map((option) => {
          const value = typeof option === 'string' ? option : option.value;
          const label = typeof option === 'string' ? option : option.label;
          return (
            <option key={value} value={value}>
              {label}
            </option>
          );
        })}
      </select>
      {message && (
        <small id={`${id}-error`} class="field-error">
          {message}
        </small>
      )}
    </div>
  );
}

export function Checkbox(props: {
  label: ComponentChildren;
  checked: boolean;
  onValue: (checked: boolean) => void;
  disabled?: boolean;
}) {
  const id = useId();
  return (
    <div class="checkbox">
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        disabled={props.disabled}
        onChange={(event) => props.onValue(event.currentTarget.checked)}
      />
      <label for={id}>{props.label}</label>
    </div>
  );
}

/** A coloured word for a run or step result. */
export function ResultBadge(props: { result: string | null | undefined }) {
  const result = props.result ?? 'never';
  return <span class={`badge result-${result}`}>{result === 'never' ? 'never run' : result}</span>;
}

/** Tabs as links: each is a route, so the browser's back button and bookmarks work. */
export function TabLinks(props: {
  label: string;
  tabs: { href: string; label: string; current: boolean }[];
}) {
  return (
    <nav class="tabs" aria-label={props.label}>
      {props.tabs.map((tab) => (
        <Link key={tab.href} href={tab.href} aria-current={tab.current ? 'page' : undefined}>
          {tab.label}
        </Link>
      ))}
    </nav>
  );
}

/** Copies text to the clipboard and says so to screen readers too. */
export function CopyButton(props: { text: string; label?: string }) {
  return (
    <button
      type="button"
      class="secondary small"
      onClick={async (event) => {
        const button = event.currentTarget;
        await navigator.clipboard?.writeText(props.text).catch(() => undefined);
        button.dataset.copied = 'true';
        button.setAttribute('aria-label', 'Copied');
        setTimeout(() => {
          delete button.dataset.copied;
          button.removeAttribute('aria-label');
        }, 1500);
      }}
    >
      {props.label ?? 'Copy'}
    </button>
  );
}

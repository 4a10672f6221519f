import { useEffect, useRef, useState } from 'preact/hooks';
import type { EditorHandle, Language } from './codemirror';
import { useTheme } from './theme';

/** How many of the editor's own values may wait for the parent to hand them back as `value`. */
const ECHOES = 64;

/**
 * A code editor for scripts and bodies (CodeMirror 6). CodeMirror loads on first use; until then a
 * plain textarea with the same label holds the text, so nothing is lost and keyboards work at once.
 *
 * The editor owns its document. `value` is written into it only when it comes from outside (a
 * reload, a discard): a `value` the editor itself reported is an echo, however late it arrives.
 * Effects run after paint, so with fast typing the parent hands back values several keys old;
 * writing those back would undo the keys typed since, report the old text again, and the two
 * would overwrite each other without end.
 */
export function CodeEditor(props: {
  label: string;
  value: string;
  onValue?: (value: string) => void;
  language: Language;
  readOnly?: boolean;
  placeholder?: string;
  minLines?: number;
}) {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<EditorHandle | null>(null);
  const onValue = useRef(props.onValue);
  onValue.current = props.onValue;
  const [ready, setReady] = useState(false);
  const { dark } = useTheme();
  // The latest value, for an editor created after the textarea was typed into.
  const latest = useRef(props.value);
  latest.current = props.value;
  // Values the editor reported that the parent has not handed back yet, oldest first.
  const echoes = useRef<string[]>([]);

  useEffect(() => {
    let cancelled = false;
    void import('./codemirror').then(({ createEditor }) => {
      if (cancelled || !host.current) return;
      editor.current = createEditor({
        parent: host.current,
        value: latest.current,
        language: props.language,
        label: props.label,
        readOnly: props.readOnly ?? false,
        dark,
        placeholder: props.placeholder,
        onChange: (value) => {
          if (!onValue.current) return;
          echoes.current.push(value);
          if (echoes.current.length > ECHOES) echoes.current.shift();
          onValue.current(value);
        },
      });
      setReady(true);
    });
    return () => {
      cancelled = true;
      editor.current?.destroy();
      editor.current = null;
    };
    // The editor is created once; later changes arrive through the effects below.
  }, []);

  useEffect(() => {
    const echo = echoes.current.indexOf(props.value);
    if (echo >= 0) {
      // The editor's own text coming back: it and everything reported before it are settled.
      echoes.current.splice(0, echo + 1);
      return;
    }
    echoes.current = [];
    editor.current?.setValue(props.value);
  }, [props.value]);
  useEffect(() => editor.current?.setLanguage(props.language), [props.language]);
  useEffect(() => editor.current?.setDark(dark), [dark]);

  const minHeight = `${(props.minLines ?? 4) * 1.5 + 0.5}em`;
  return (
    <div class="code-editor" style={{ minHeight }} data-language={props.language}>
      {!ready && (
        <textarea
          aria-label={props.label}
          value={props.value}
          readOnly={props.readOnly}
          placeholder={props.placeholder}
          style={{ minHeight }}
          onInput={(event) => props.onValue?.(event.currentTarget.value)}
        />
      )}
      <div ref={host} />
    </div>
  );
}

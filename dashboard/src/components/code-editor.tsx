import { useEffect, useRef, useState } from 'preact/hooks';
import type { EditorHandle, Language } from './codemirror';
import { useTheme } from './theme';

/**
 * A code editor for scripts and bodies (CodeMirror 6). CodeMirror loads on first use; until then a
 * plain textarea with the same label holds the text, so nothing is lost and keyboards work at once.
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

  useEffect(() => {
    let cancelled = false;
    void import('./codemirror').then(({ createEditor }) => {
      if (cancelled || !host.current) return;
      editor.current = createEditor({
        parent: host.current,
        value: props.value,
        language: props.language,
        label: props.label,
        readOnly: props.readOnly ?? false,
        dark,
        placeholder: props.placeholder,
        onChange: (value) => onValue.current?.(value),
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

  useEffect(() => editor.current?.setValue(props.value), [props.value]);
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

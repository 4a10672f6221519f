/** CodeMirror 6, loaded only when a view first shows a code editor (it is the biggest part of the build). */
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { javascript } from '@codemirror/lang-javascript';
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { xml } from '@codemirror/lang-xml';
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { linter, lintGutter } from '@codemirror/lint';
import { Compartment, EditorState, type Extension } from '@codemirror/state';
import { oneDark } from '@codemirror/theme-one-dark';
import { EditorView, keymap, lineNumbers, placeholder as placeholderText } from '@codemirror/view';

export type Language = 'javascript' | 'json' | 'xml' | 'text';

function languageOf(language: Language): Extension {
  switch (language) {
    case 'javascript':
      return javascript();
    case 'json':
      return [json(), linter(jsonParseLinter()), lintGutter()];
    case 'xml':
      return xml();
    case 'text':
      return [];
  }
}

export interface EditorHandle {
  setValue(value: string): void;
  setLanguage(language: Language): void;
  setDark(dark: boolean): void;
  destroy(): void;
}

export function createEditor(options: {
  parent: HTMLElement;
  value: string;
  language: Language;
  label: string;
  readOnly: boolean;
  dark: boolean;
  placeholder?: string;
  onChange: (value: string) => void;
}): EditorHandle {
  const language = new Compartment();
  const theme = new Compartment();
  const view = new EditorView({
    parent: options.parent,
    state: EditorState.create({
      doc: options.value,
      extensions: [
        lineNumbers(),
        history(),
        bracketMatching(),
        syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
        // Tab indents; Escape then Tab leaves the editor, so keyboard users are never trapped.
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        EditorView.lineWrapping,
        EditorState.readOnly.of(options.readOnly),
        EditorView.contentAttributes.of({ 'aria-label': options.label }),
        options.placeholder ? placeholderText(options.placeholder) : [],
        language.of(languageOf(options.language)),
        theme.of(options.dark ? oneDark : []),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    setValue(value) {
      if (value === view.state.doc.toString()) return;
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value } });
    },
    setLanguage(next) {
      view.dispatch({ effects: language.reconfigure(languageOf(next)) });
    },
    setDark(dark) {
      view.dispatch({ effects: theme.reconfigure(dark ? oneDark : []) });
    },
    destroy() {
      view.destroy();
    },
  };
}

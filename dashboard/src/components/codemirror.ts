/** CodeMirror 6, loaded only when a view first shows a code editor (it is the biggest part of the build). */
import {
  autocompletion,
  type Completion,
  type CompletionContext,
  type CompletionResult,
  type CompletionSource,
} from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import { javascript, javascriptLanguage } from '@codemirror/lang-javascript';
import { json, jsonParseLinter } from '@codemirror/lang-json';
import { xml } from '@codemirror/lang-xml';
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { linter, lintGutter } from '@codemirror/lint';
import { Annotation, Compartment, EditorState, type Extension } from '@codemirror/state';
import { oneDark } from '@codemirror/theme-one-dark';
import { EditorView, keymap, lineNumbers, placeholder as placeholderText } from '@codemirror/view';
import {
  SCRIPT_GLOBALS,
  SCRIPT_MEMBERS,
  type ScriptName,
  TEMPLATE_FUNCTION_NAMES,
} from '../../../src/domain/script-names';

export type Language = 'javascript' | 'json' | 'xml' | 'text';

function option(entry: ScriptName): Completion {
  return { label: entry.name, type: entry.kind, detail: entry.detail };
}

const IDENTIFIER = /^[\w$]*$/;

/** Script globals, and the members of `request`, `response`, `variables` and `assert` after a dot. */
function scriptCompletions(context: CompletionContext): CompletionResult | null {
  const member = context.matchBefore(/[A-Za-z_$][\w$]*\.[\w$]*$/);
  if (member) {
    const dot = member.text.indexOf('.');
    const before = member.from > 0 ? context.state.sliceDoc(member.from - 1, member.from) : '';
    const members = SCRIPT_MEMBERS[member.text.slice(0, dot)];
    if (members === undefined || before === '.') return null;
    return { from: member.from + dot + 1, options: members.map(option), validFor: IDENTIFIER };
  }
  const word = context.matchBefore(/[A-Za-z_$][\w$]*$/);
  if (word === null && !context.explicit) return null;
  const from = word?.from ?? context.pos;
  if (from > 0 && context.state.sliceDoc(from - 1, from) === '.') return null;
  return { from, options: SCRIPT_GLOBALS.map(option), validFor: IDENTIFIER };
}

/** Template functions after `{{` in request bodies. */
const templateCompletions: CompletionSource = (context) => {
  const open = context.matchBefore(/\{\{\s*[A-Za-z_]*$/);
  if (open === null) return null;
  const name = /[A-Za-z_]*$/.exec(open.text)?.[0] ?? '';
  return {
    from: open.to - name.length,
    options: TEMPLATE_FUNCTION_NAMES.map(option),
    validFor: /^[A-Za-z_]*$/,
  };
};

const templateData = EditorState.languageData.of(() => [{ autocomplete: templateCompletions }]);

function languageOf(language: Language): Extension {
  switch (language) {
    case 'javascript':
      return [javascript(), javascriptLanguage.data.of({ autocomplete: scriptCompletions })];
    case 'json':
      return [json(), linter(jsonParseLinter()), lintGutter(), templateData];
    case 'xml':
      return [xml(), templateData];
    case 'text':
      return templateData;
  }
}

/** Marks a change written from outside (setValue): it is not reported back through onChange. */
const external = Annotation.define<boolean>();

export interface EditorHandle {
  /** Replaces the document, unless it already holds `value`; not reported through onChange. */
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
        autocompletion(),
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
          const typed = update.transactions.some((tr) => tr.docChanged && !tr.annotation(external));
          if (typed) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    setValue(value) {
      if (value === view.state.doc.toString()) return;
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: value },
        annotations: external.of(true),
      });
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

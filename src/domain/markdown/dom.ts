/**
 * The small tree toolkit the rendering filters share (domhandler nodes, as htmlparser2 builds
 * them): walking text nodes outside given ancestors and replacing a node by several.
 */
import { Element, Text, type AnyNode, type ChildNode, type ParentNode } from 'domhandler';

export { Element, Text };
export type { AnyNode, ChildNode, ParentNode };

export function isElement(node: AnyNode): node is Element {
  return node instanceof Element;
}

/** Every element under `root`, in document order. */
export function elements(root: ParentNode): Element[] {
  const out: Element[] = [];
  const stack: ChildNode[] = [...root.children].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!isElement(node)) continue;
    out.push(node);
    for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i]);
  }
  return out;
}

/** The text nodes under `root` that have no ancestor named in `skip`, in document order. */
export function textNodes(root: ParentNode, skip: ReadonlySet<string>): Text[] {
  const out: Text[] = [];
  const stack: ChildNode[] = [...root.children].reverse();
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node instanceof Text) out.push(node);
    else if (isElement(node) && !skip.has(node.name)) {
      for (let i = node.children.length - 1; i >= 0; i -= 1) stack.push(node.children[i]);
    }
  }
  return out;
}

function relink(parent: ParentNode): void {
  const kids = parent.children;
  for (let i = 0; i < kids.length; i += 1) {
    kids[i].parent = parent;
    kids[i].prev = i > 0 ? kids[i - 1] : null;
    kids[i].next = i + 1 < kids.length ? kids[i + 1] : null;
  }
}

export function replaceWith(node: ChildNode, replacement: ChildNode[]): void {
  const parent = node.parent;
  if (!parent) return;
  const at = parent.children.indexOf(node);
  if (at < 0) return;
  // concat, not splice(...): a text node may become hundreds of thousands of nodes.
  parent.children = parent.children.slice(0, at).concat(replacement, parent.children.slice(at + 1));
  node.parent = null;
  relink(parent);
}

export function insertAt(parent: ParentNode, index: number, nodes: ChildNode[]): void {
  parent.children = parent.children.slice(0, index).concat(nodes, parent.children.slice(index));
  relink(parent);
}

/** An element with attributes in the order given, and its children. */
export function el(name: string, attribs: Record<string, string>, children: ChildNode[] = []): Element {
  const e = new Element(name, attribs, children);
  relink(e);
  return e;
}

export function textContent(node: AnyNode): string {
  if (node instanceof Text) return node.data;
  if (!isElement(node)) return '';
  let s = '';
  for (const c of node.children) s += textContent(c);
  return s;
}

/** Adds a class to an element's `class` attribute. */
export function addClass(e: Element, name: string): void {
  const current = e.attribs.class;
  e.attribs.class = current ? `${current} ${name}` : name;
}

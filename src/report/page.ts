/**
 * The page around a report: a strict Content-Security-Policy (nothing loads from anywhere; the one
 * inline style and the one inline script are allowed by their hashes, nothing else runs), the style
 * sheet, and the script that folds tool calls, sorts tables and opens a linked run. Without
 * JavaScript every fold stays open and the tables keep their order.
 */
import { text } from "./escape.ts";

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em 2em;color:#1d232a;background:#fff}
h1{font-size:1.5em}h2{font-size:1.25em;border-bottom:1px solid #ccd;margin-top:2em}h3{font-size:1.1em}
pre,code,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12.5px}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f5f6f8;padding:.5em;margin:.3em 0;border-radius:4px}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #d6d9de;padding:.2em .6em;text-align:left;vertical-align:top}
th{background:#eef0f3}table.sortable th{cursor:pointer}td.n{text-align:right;font-variant-numeric:tabular-nums}
dl.head{display:grid;grid-template-columns:max-content 1fr;gap:.15em 1em}dl.head dt{font-weight:600}dl.head dd{margin:0;white-space:pre-wrap;overflow-wrap:anywhere}
.step{border-left:3px solid #c9d2dc;padding:.2em 0 .2em .8em;margin:.8em 0}.step.bad{border-left-color:#c0392b}
.meta{color:#5b6670;font-weight:normal;font-size:.9em}.says{white-space:pre-wrap;overflow-wrap:anywhere}
details.call{margin:.3em 0;border:1px solid #dde1e6;border-radius:4px;padding:.1em .5em}details.call>summary{cursor:pointer;overflow-wrap:anywhere}
details.call.bad{border-color:#e3a39b;background:#fdf3f2}.tool{font-weight:600}
details.child{margin:.5em 0 .3em .8em;border-left:3px solid #7b8794;padding-left:.8em}details.child>summary{cursor:pointer;font-weight:600}
.badge{display:inline-block;padding:0 .4em;border-radius:3px;font-size:.85em;color:#fff;background:#5b6670}
.badge.ok,.s-passed,.s-completed{background:#1e8449;color:#fff}.badge.bad,.s-failed,.s-error,.s-timeout{background:#c0392b;color:#fff}
.s-interrupted,.s-unfinished,.badge.warn{background:#b9770e;color:#fff}
.diff .add{color:#14622f;background:#e6f6ea}.diff .del{color:#8e1b12;background:#fbe9e7}.diff .hunk{color:#5b3cc4}.diff .file{font-weight:600}
.cut{color:#8a5a00;font-style:italic}.note{color:#5b6670}
.you{background:#eef4fb;border-left:3px solid #4a78b0;padding:.2em .8em;margin:1.2em 0 .8em}.you h4{margin:.3em 0}
.event{border-left:3px dashed #9aa5b1;padding:.2em .8em;margin:.8em 0}.event h4{margin:.3em 0}details.event>summary{cursor:pointer;overflow-wrap:anywhere}
.part{border-top:2px dashed #9aa5b1;padding-top:.5em}
details.run{content-visibility:auto;contain-intrinsic-size:auto 3em;margin:1em 0;border-top:2px solid #9aa5b1;padding-top:.3em}details.run>summary{font-size:1.15em;font-weight:600;cursor:pointer}
.plots{display:flex;flex-wrap:wrap;gap:1.5em}.plots figure{margin:0}.plots figcaption{font-weight:600;margin-bottom:.2em}
.lane{border-left:3px solid #4a78b0;padding:.2em 0 .2em .8em;margin:.6em 0}.lane-bar{display:block;margin:.3em 0}.lane-events{margin:.2em 0;padding-left:1.5em;color:#3c4650}
svg text{font:11px system-ui,sans-serif;fill:#333}.flip-fixed{background:#e6f6ea}.flip-broke{background:#fbe9e7}
tr.net-denied{background:#fbe9e7}table.network td{overflow-wrap:anywhere}.step-network{margin:.3em 0;overflow-wrap:anywhere}
`.trim();

// Folds what is folded by default once the page has loaded (without JavaScript all stays open;
// a batch's runs fold, and the calls inside a run fold when it is first opened, so a page of 500
// runs does not touch every call at load),
// sorts a table by the clicked column (cells carry their sort value in data-v), and opens a run's
// fold when a link leads into it.
const SCRIPT = `
(function(){
function fold(root,all){var f=root.querySelectorAll(all?"details.fold":"details.fold:not(details.run details)");
for(var i=0;i<f.length;i++)f[i].open=false;}
fold(document,false);
var done=new WeakSet();
document.addEventListener("toggle",function(e){var d=e.target;
if(d.classList&&d.classList.contains("run")&&d.open&&!done.has(d)){done.add(d);fold(d,true);}},true);
var bs=document.querySelectorAll("button[data-fold]");
for(var j=0;j<bs.length;j++){bs[j].hidden=false;bs[j].addEventListener("click",function(e){
var open=e.currentTarget.getAttribute("data-fold")==="open";
var all=document.querySelectorAll("details.fold");for(var k=0;k<all.length;k++)all[k].open=open;});}
function reveal(){var id=location.hash.slice(1);if(!id)return;var el=document.getElementById(id);
while(el){if(el.tagName==="DETAILS")el.open=true;el=el.parentElement;}
var t=document.getElementById(id);if(t)t.scrollIntoView();}
window.addEventListener("hashchange",reveal);reveal();
var tables=document.querySelectorAll("table.sortable");
for(var t=0;t<tables.length;t++)(function(table){
var heads=table.querySelectorAll("thead th");
for(var c=0;c<heads.length;c++)(function(col,th){th.title="sort";th.addEventListener("click",function(){
var body=table.tBodies[0];var rows=Array.prototype.slice.call(body.rows);
var dir=th.getAttribute("data-dir")==="asc"?-1:1;th.setAttribute("data-dir",dir===1?"asc":"desc");
function v(r){var cell=r.cells[col];var s=cell?cell.getAttribute("data-v"):null;return s===null?(cell?cell.textContent:""):s;}
rows.sort(function(a,b){var x=v(a),y=v(b);var nx=parseFloat(x),ny=parseFloat(y);
if(x!==""&&y!==""&&!isNaN(nx)&&!isNaN(ny))return (nx-ny)*dir;return x<y?-dir:x>y?dir:0;});
for(var r=0;r<rows.length;r++)body.appendChild(rows[r]);});})(c,heads[c]);})(tables[t]);
})();
`.trim();

async function sha256(content: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(content));
  let binary = "";
  for (const byte of new Uint8Array(digest)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The policy the page runs under: nothing loads, only the page's own style and script apply. */
export async function contentSecurityPolicy(): Promise<string> {
  return [
    "default-src 'none'",
    `script-src 'sha256-${await sha256(SCRIPT)}'`,
    `style-src 'sha256-${await sha256(STYLE)}'`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
}

/** The whole page: `body` (already HTML) inside the document, its title escaped. */
export async function page(title: string, body: string): Promise<string> {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${await contentSecurityPolicy()}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${text(title)}</title>
<style>${STYLE}</style>
</head><body>
<p><button data-fold="open" hidden>open all</button> <button data-fold="close" hidden>fold all</button></p>
${body}
<script>${SCRIPT}</script>
</body></html>
`;
}

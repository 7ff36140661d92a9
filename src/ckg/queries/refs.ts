/**
 * Reference queries: the edges of the graph, appended to each language's definitions query so one
 * pass over the tree finds both. Captures:
 * - `@ref.call`: the name of a called function or method (constructors and decorators included);
 * - `@ref.attr`: an attribute or field name read or written through an object;
 * - `@ref.import`: a name brought in by an import;
 * - `@ref.base`: a type a class derives from (extends, implements, base list, embedding, trait);
 *   `@ref.derived` in the same match names the deriving type when no class encloses the base
 *   (Rust's `impl Trait for Type`).
 * - `@anon`: an anonymous function (JS function expression or arrow, lambda, closure, Go func
 *   literal); a reference in one that no named function encloses is reported at the anonymous
 *   function's own line (see `edges.ts`).
 * A node captured as a call is not also an attribute access.
 */

export const PYTHON_REFS = `
(call function: (identifier) @ref.call)
(call function: (attribute attribute: (identifier) @ref.call))
(decorator (identifier) @ref.call)
(decorator (attribute attribute: (identifier) @ref.call))
(attribute attribute: (identifier) @ref.attr)
(import_from_statement name: (dotted_name (identifier) @ref.import))
(import_from_statement name: (aliased_import name: (dotted_name (identifier) @ref.import)))
(import_statement name: (dotted_name (identifier) @ref.import))
(import_statement name: (aliased_import name: (dotted_name (identifier) @ref.import)))
(class_definition
  superclasses: (argument_list [(identifier) (attribute) (subscript)] @ref.base))
(lambda) @anon
`;

const JS_REFS_COMMON = `
(call_expression function: (identifier) @ref.call)
(call_expression function: (member_expression property: (property_identifier) @ref.call))
(new_expression constructor: (identifier) @ref.call)
(new_expression constructor: (member_expression property: (property_identifier) @ref.call))
(member_expression property: (property_identifier) @ref.attr)
(import_specifier name: (identifier) @ref.import)
(import_clause (identifier) @ref.import)
(namespace_import (identifier) @ref.import)
; Re-exports (\`export { f } from './a'\`, \`export { g as h }\`) use the name like an import.
(export_specifier name: (identifier) @ref.import)
(function_expression) @anon
(arrow_function) @anon
(generator_function) @anon
`;

export const JAVASCRIPT_REFS = JS_REFS_COMMON + `
(class_heritage [(identifier) (member_expression)] @ref.base)
`;

export const TYPESCRIPT_REFS = JS_REFS_COMMON + `
(extends_clause value: [(identifier) (member_expression)] @ref.base)
(implements_clause [(type_identifier) (generic_type) (nested_type_identifier)] @ref.base)
(extends_type_clause type: [(type_identifier) (generic_type) (nested_type_identifier)] @ref.base)
`;

export const JAVA_REFS = `
(method_invocation name: (identifier) @ref.call)
(object_creation_expression type: (_) @ref.call)
(field_access field: (identifier) @ref.attr)
(import_declaration (scoped_identifier name: (identifier) @ref.import))
(superclass (_) @ref.base)
(super_interfaces (type_list (_) @ref.base))
(extends_interfaces (type_list (_) @ref.base))
(lambda_expression) @anon
`;

const C_REFS_COMMON = `
(call_expression function: (identifier) @ref.call)
(call_expression function: (field_expression field: (field_identifier) @ref.call))
(field_expression field: (field_identifier) @ref.attr)
; Not an edge: where the parse failed, so the indexer can tell whether an error region crosses
; into the next top-level definition (see \`needsDefinitionRecovery\` in preproc.ts).
(ERROR) @error
`;

export const C_REFS = C_REFS_COMMON;

export const CPP_REFS = C_REFS_COMMON + `
(call_expression function: (qualified_identifier name: (identifier) @ref.call))
(call_expression function: (template_function name: (identifier) @ref.call))
(base_class_clause [(type_identifier) (qualified_identifier) (template_type)] @ref.base)
(lambda_expression) @anon
`;

export const GO_REFS = `
(call_expression function: (identifier) @ref.call)
(call_expression function: (selector_expression field: (field_identifier) @ref.call))
(selector_expression field: (field_identifier) @ref.attr)
(struct_type (field_declaration_list
  (field_declaration !name type: [(type_identifier) (qualified_type) (pointer_type) (generic_type)] @ref.base)))
(interface_type (type_elem . [(type_identifier) (qualified_type) (generic_type)] @ref.base .))
(func_literal) @anon
`;

export const RUST_REFS = `
(call_expression function: (identifier) @ref.call)
(call_expression function: (scoped_identifier name: (identifier) @ref.call))
(call_expression function: (field_expression field: (field_identifier) @ref.call))
(call_expression function: (generic_function function: (identifier) @ref.call))
(macro_invocation macro: (identifier) @ref.call)
; Inside a macro's arguments tree-sitter keeps only tokens: a name followed at once by a
; parenthesised token tree is a call (\`assert_eq!(helper(), 1)\`, \`write!(f, "{}", x.name())\`).
(token_tree (identifier) @ref.call . (token_tree) @_args (#match? @_args "^[(]"))
(field_expression field: (field_identifier) @ref.attr)
(use_declaration argument: (scoped_identifier name: (identifier) @ref.import))
(use_declaration argument: (identifier) @ref.import)
(use_list (identifier) @ref.import)
(use_list (scoped_identifier name: (identifier) @ref.import))
(use_as_clause path: (scoped_identifier name: (identifier) @ref.import))
(impl_item trait: (_) @ref.base type: (_) @ref.derived)
(trait_item bounds: (trait_bounds [(type_identifier) (scoped_type_identifier) (generic_type)] @ref.base))
(closure_expression) @anon
`;

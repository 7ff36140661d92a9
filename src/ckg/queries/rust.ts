/** Definitions query for Rust (capture protocol: see `../extract.ts`). */
export const RUST_QUERY = `
(function_item name: (identifier) @name body: (block) @body) @def.function
(trait_item body: (declaration_list (function_signature_item name: (identifier) @name) @def.method))

(struct_item name: (type_identifier) @name) @def.class.struct
(enum_item name: (type_identifier) @name) @def.class.enum
(union_item name: (type_identifier) @name) @def.class.union
(trait_item name: (type_identifier) @name body: (declaration_list) @body) @def.class.trait
(type_item name: (type_identifier) @name) @def.class.type

; impl blocks are not definitions, but they give the functions inside them a class.
(impl_item type: (_) @name body: (declaration_list)) @scope

(struct_item body: (field_declaration_list (field_declaration name: (_) @name) @def.field))
(union_item body: (field_declaration_list (field_declaration name: (_) @name) @def.field))
(enum_item body: (enum_variant_list (enum_variant name: (_) @name) @def.field))
`;

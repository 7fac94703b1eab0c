//! `#[derive(Key)]` for mergepath: a user struct becomes a key type the GPU kernels can sort,
//! merge and search. Use it through `mergepath::Key` (this crate is re-exported there).
//!
//! ```ignore
//! #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
//! #[repr(C)]
//! #[key(order = "score desc, id asc")]
//! #[key(comparator(ByX, cuda = "a.x < b.x", rust = "|a, b| a.x < b.x"))]
//! struct Hit { score: f32, id: u32, x: i64 }
//! ```
//!
//! - The struct must be `#[repr(C)]`, without generics, with fields of the built-in numeric
//!   types (`u8`..`u64`, `i8`..`i64`, `f32`, `f64`) or arrays of them (`[u8; 16]`), and no
//!   padding (add explicit fields). Named fields or a tuple struct (`struct ByPopcount(u32)`):
//!   in `order` a tuple struct's fields are `0`, `1`, ..., in CUDA expressions `f0`, `f1`, ....
//! - Keys of at most 16 bytes get kernels of their own and every algorithm. Wider structs are
//!   *records* (a 64-byte row by `score desc, id`): no kernels are compiled for them, and their
//!   sorts (`sort_keys`, `sort_keys_copy`, `sort_pairs`, `sort_indices`, the host-slice sorts)
//!   sort each record's order packed into `u64` words with its position (one stable pass per
//!   word, the last first) and gather the records once, so a record's bytes move once instead
//!   of once per merge pass. Merges, searches, set operations, segmented sorts, multiway merges
//!   and runs of records go by each record's order as one `u64` key (its packed word, or its
//!   rank where the order is wider) and gather the records once; custom comparators on records and orders of more than 32 elements (an array counts each
//!   element) are compile errors.
//! - `order` (default: every field ascending, in declaration order) is the field-order
//!   comparator: `mergepath::Less` sorts by it, `mergepath::Greater` by its reverse. Floats use
//!   the IEEE total order, as the built-in keys; arrays compare lexicographically (element 0
//!   first), `desc` reversing the whole array's order. Fields the order leaves out are carried
//!   with the key, never compared. Where the order's fields fit 64 bits the GPU
//!   compares one packed integer per key; where they are every field of an 8-byte key, key
//!   sorts sort the packed integers (as fast as `u64` keys: the first pass packs them as it
//!   reads them, the last unpacks them as it writes them).
//! - Each `comparator(Name, cuda = "...", rust = "...")` defines a comparator type `Name`: a CUDA
//!   expression in `a` and `b` (the two keys, `const T&`) and its Rust twin, a closure on
//!   `(&T, &T)`, both answering "does `a` go strictly before `b`" (a strict weak order).
//! - At expansion the kernel templates are compiled with nvcc for the type and each comparator
//!   (cached by content hash under the target directory) and embedded, so nothing is compiled
//!   at run time. A CUDA expression that does not compile is a compile error here, with nvcc's
//!   message. The CUDA struct's size, alignment and field offsets are checked against Rust's in
//!   both languages.

use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as TokenStream2};
use quote::quote;
use syn::{parse_macro_input, spanned::Spanned, Data, DeriveInput, Error, Fields, Ident, LitStr, Type};

/// The widest key the kernels' tiles take (the largest key size in `tuning.tsv`).
const MAX_KEY_BYTES: usize = 16;

/// Elements a record's packed order holds: the contract's `RECORD_MAX_FIELDS` (the kernels'
/// parameter array).
fn record_max_elements() -> usize {
    mergepath_build::CONSTANTS.iter().find(|c| c.name == "RECORD_MAX_FIELDS").map_or(0, |c| c.value as usize)
}

/// See the crate documentation.
#[proc_macro_derive(Key, attributes(key))]
pub fn derive_key(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(&input).unwrap_or_else(Error::into_compile_error).into()
}

/// A field of the key struct and its CUDA twin.
struct Field {
    /// How Rust names it: `score`, or `0` in a tuple struct.
    member: syn::Member,
    /// How CUDA and `order` name it: `score`; `f0` (CUDA) and `0` (`order`) in a tuple struct.
    cuda_name: String,
    order_name: String,
    /// The element type: the field's type, or an array field's element type.
    elem_ty: Type,
    cuda_type: &'static str,
    /// Elements: `Some(n)` for an array `[T; n]`, else a scalar.
    len: Option<usize>,
    /// Size in bytes of one element.
    elem_size: usize,
    /// Byte offset in the repr(C) layout (no padding, so the sum of the sizes before it).
    offset: usize,
}

impl Field {
    /// Bytes of the whole field.
    fn size(&self) -> usize {
        self.elem_size * self.len.unwrap_or(1)
    }

    /// The CUDA expressions of its elements in key `k`: `k.x`, or `k.x[0]`, `k.x[1]`, ....
    fn cuda_elems(&self, k: &str) -> Vec<String> {
        match self.len {
            None => vec![format!("{k}.{}", self.cuda_name)],
            Some(n) => (0..n).map(|j| format!("{k}.{}[{j}]", self.cuda_name)).collect(),
        }
    }
}

/// One comparator to instantiate.
struct Comparator {
    /// The Rust type implementing `mergepath::Comparator` (a path for Less/Greater).
    rust_type: TokenStream2,
    /// The comparator's `NAME`.
    name: String,
    /// CUDA functor definition and its name.
    cuda_def: String,
    cuda_name: String,
    /// The body of `is_less(&self, a, b)`.
    is_less: TokenStream2,
    /// Where nvcc's errors point.
    span: Span,
    /// A new unit struct to declare (custom comparators).
    declare: Option<Ident>,
    /// `Comparator::PACKED_U64`: the order is that of the packed key, ascending (false) or
    /// descending (true).
    packed_u64: Option<bool>,
    /// The field order, ascending (false) or descending (true); `None` for a custom comparator.
    field_order: Option<bool>,
}

/// The built-in numeric type a field has, if it has one.
fn numeric(ty: &Type) -> Option<&'static mergepath_build::BuiltinKey> {
    let Type::Path(p) = ty else { return None };
    mergepath_build::builtin_key(&p.path.get_ident()?.to_string())
}

/// A field type's element type, built-in twin and array length: `u32`, or `[u32; 4]` (the
/// length an integer literal, at least 1).
fn field_type(ty: &Type) -> syn::Result<(Type, &'static mergepath_build::BuiltinKey, Option<usize>)> {
    let unsupported = || Error::new(ty.span(), format!("unsupported key field type: use {}, or an array of them such as [u8; 16]", numeric_names()));
    if let Type::Array(array) = ty {
        let key = numeric(&array.elem).ok_or_else(unsupported)?;
        let len = match &array.len {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(n), .. }) => n.base10_parse::<usize>()?,
            other => return Err(Error::new(other.span(), "an array field's length must be an integer literal")),
        };
        if len == 0 {
            return Err(Error::new(array.len.span(), "an array field needs at least one element"));
        }
        return Ok(((*array.elem).clone(), key, Some(len)));
    }
    Ok((ty.clone(), numeric(ty).ok_or_else(unsupported)?, None))
}

/// "u8, u16, ... or f64": the field types `numeric` accepts.
fn numeric_names() -> String {
    let names: Vec<&str> = mergepath_build::BUILTIN_KEYS.iter().map(|k| k.rust).collect();
    let (last, rest) = names.split_last().expect("built-in key types");
    format!("{} or {last}", rest.join(", "))
}

fn expand(input: &DeriveInput) -> syn::Result<TokenStream2> {
    let name = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(Error::new(input.generics.span(), "#[derive(Key)] does not support generic structs"));
    }
    let repr_c = input.attrs.iter().filter(|a| a.path().is_ident("repr")).any(|a| {
        let mut c = false;
        let _ = a.parse_nested_meta(|m| {
            c |= m.path.is_ident("C");
            Ok(())
        });
        c
    });
    if !repr_c {
        return Err(Error::new(name.span(), "#[derive(Key)] needs #[repr(C)], so the CUDA struct has the same layout"));
    }
    let Data::Struct(data) = &input.data else {
        return Err(Error::new(name.span(), "#[derive(Key)] works on structs (named fields or a tuple struct)"));
    };
    let struct_fields: Vec<&syn::Field> = match &data.fields {
        Fields::Named(named) => named.named.iter().collect(),
        Fields::Unnamed(unnamed) => unnamed.unnamed.iter().collect(),
        Fields::Unit => Vec::new(),
    };

    // Fields and the repr(C) layout; padding would be uninitialized bytes in a Pod key.
    let mut fields = Vec::new();
    let (mut offset, mut align) = (0usize, 1usize);
    for (i, f) in struct_fields.into_iter().enumerate() {
        let (member, cuda_name, order_name) = match &f.ident {
            Some(ident) => (syn::Member::Named(ident.clone()), ident.to_string(), ident.to_string()),
            None => (syn::Member::Unnamed(syn::Index { index: i as u32, span: f.ty.span() }), format!("f{i}"), i.to_string()),
        };
        let (elem_ty, key, len) = field_type(&f.ty)?;
        let (cuda_type, elem_size) = (key.cuda, key.size);
        if offset % elem_size != 0 {
            return Err(Error::new(f.span(), format!("padding before field `{order_name}` would leak uninitialized bytes: reorder the fields or add an explicit padding field")));
        }
        let field = Field { member, cuda_name, order_name, elem_ty, cuda_type, len, elem_size, offset };
        offset += field.size();
        align = align.max(elem_size);
        fields.push(field);
    }
    if fields.is_empty() {
        return Err(Error::new(name.span(), "#[derive(Key)] needs at least one field"));
    }
    if offset % align != 0 {
        return Err(Error::new(name.span(), format!("{} bytes of padding at the end of `{name}` would leak uninitialized bytes: add an explicit padding field", align - offset % align)));
    }
    let size = offset;

    // #[key(order = "...")] and #[key(comparator(Name, cuda = "...", rust = "..."))].
    let mut order: Option<(Vec<(usize, bool)>, Span)> = None;
    let mut customs = Vec::new();
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("key")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("order") {
                let spec: LitStr = meta.value()?.parse()?;
                if order.is_some() {
                    return Err(Error::new(spec.span(), "`order` given twice"));
                }
                order = Some((parse_order(&spec, &fields)?, spec.span()));
                Ok(())
            } else if meta.path.is_ident("comparator") {
                let (mut ident, mut cuda, mut rust) = (None, None, None);
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("cuda") {
                        cuda = Some(inner.value()?.parse::<LitStr>()?);
                    } else if inner.path.is_ident("rust") {
                        rust = Some(inner.value()?.parse::<LitStr>()?);
                    } else if let Some(id) = inner.path.get_ident().filter(|_| ident.is_none()) {
                        ident = Some(id.clone());
                    } else {
                        return Err(inner.error("expected `comparator(Name, cuda = \"...\", rust = \"...\")`"));
                    }
                    Ok(())
                })?;
                let missing = |what: &str| meta.error(format!("comparator needs {what}: `comparator(Name, cuda = \"...\", rust = \"...\")`"));
                customs.push((ident.ok_or_else(|| missing("a name"))?, cuda.ok_or_else(|| missing("`cuda`"))?, rust.ok_or_else(|| missing("`rust`"))?));
                Ok(())
            } else {
                Err(meta.error("expected `order = \"...\"` or `comparator(...)`"))
            }
        })?;
    }
    let (order, order_span) = order.unwrap_or_else(|| ((0..fields.len()).map(|i| (i, false)).collect(), name.span()));
    if size > MAX_KEY_BYTES {
        return record(input, &fields, size, align, &order, order_span, &customs);
    }

    let mut comparators = Vec::new();
    // Field order, lexicographic; floats in the total order. Where the order's fields fit 64
    // bits, each side is packed into one unsigned integer whose `<` is that order (each field
    // as order_bits, complemented where descending, the first field highest), so a comparison
    // is one integer compare; else field by field through order_key.
    let bits: usize = order.iter().map(|&(i, _)| fields[i].size() * 8).sum();
    // The order covers every bit of an 8-byte key: the packing is then a bijection, and sorts
    // sort the packed integers (`Comparator::PACKED_U64`), packing and unpacking once.
    let covered: std::collections::BTreeSet<usize> = order.iter().map(|&(i, _)| i).collect();
    let packed_u64 = bits == 64 && size == 8 && covered.len() == fields.len();
    // A packed-u64 order's comparator names the packing and the u64 order (instantiate.cuh).
    let packed_types = |order: &str| {
        if packed_u64 {
            format!("  using packed_codec = {name}_packing;\n  using packed_order = mergepath::{order}<uint64_t>;\n")
        } else {
            String::new()
        }
    };
    let mut less_body = String::new();
    let mut packing = String::new();
    if bits <= 64 {
        let word = if bits <= 32 { "uint32_t" } else { "uint64_t" };
        let (mut shift, mut parts, mut unpack) = (bits, Vec::new(), String::new());
        for &(i, desc) in &order {
            let f = &fields[i];
            let t = f.cuda_type;
            let flip = if desc { format!(" ^ mergepath::order_bits<{t}>::ones") } else { String::new() };
            // An array's elements in order, the first highest.
            for e in f.cuda_elems("k") {
                shift -= f.elem_size * 8;
                parts.push(format!("(({word})(mergepath::order_bits<{t}>::get({e}){flip}) << {shift})"));
                unpack += &format!("    {e} = mergepath::order_bits<{t}>::key((decltype(mergepath::order_bits<{t}>::ones))((p >> {shift}){flip}));\n");
            }
        }
        packing += &format!(
            "__device__ __forceinline__ {word} {name}_order_bits(const {name}& k) {{\n  return {};\n}}\n",
            parts.join(" | ")
        );
        if packed_u64 {
            // The packing and its inverse, for the sort passes that read and write the keys
            // (instantiate.cuh, MERGEPATH_PACKED_U64).
            packing += &format!(
                "#define MERGEPATH_PACKED_U64 1\n\
                 struct {name}_packing {{\n\
                 \x20 __device__ __forceinline__ static uint64_t encode(const {name}& k) {{ return {name}_order_bits(k); }}\n\
                 \x20 __device__ __forceinline__ static {name} decode(uint64_t p) {{\n    {name} k;\n{unpack}    return k;\n  }}\n}};\n"
            );
        }
        less_body += &format!("    return {name}_order_bits(a) < {name}_order_bits(b);\n");
    }
    if bits > 64 {
        // Byte arrays at 4-byte aligned places compare four elements at a time: each 32-bit
        // word byte-reversed (element 0 highest), sign bits flipped for i8, so a key stays in
        // whole-word registers instead of one register per byte.
        let aligned4 = device_align(size) >= 4;
        for &(i, desc) in &order {
            let f = &fields[i];
            let (x, y) = if desc { ("y", "x") } else { ("x", "y") };
            let t = f.cuda_type;
            let words = if f.elem_size == 1 && aligned4 && f.offset % 4 == 0 { f.len.unwrap_or(0) / 4 } else { 0 };
            let flip = if t == "int8_t" { " ^ 0x80808080u" } else { "" };
            for w in 0..words {
                let word = |k: &str| format!("(__byte_perm(reinterpret_cast<const uint32_t*>({k}.{})[{w}], 0, 0x0123){flip})", f.cuda_name);
                less_body += &format!("    {{ const uint32_t x = {}, y = {};\n      if (x != y) return {x} < {y}; }}\n", word("a"), word("b"));
            }
            for (ea, eb) in f.cuda_elems("a").iter().zip(f.cuda_elems("b")).skip(4 * words) {
                less_body += &format!("    {{ const auto x = mergepath::order_key<{t}>::get({ea}), y = mergepath::order_key<{t}>::get({eb});\n      if (x != y) return {x} < {y}; }}\n");
            }
        }
    }
    let rust_less = rust_field_order(&fields, &order);
    comparators.push(Comparator {
        rust_type: quote!(::mergepath::Less),
        name: "less".into(),
        cuda_def: format!(
            "{packing}struct {name}_less {{\n{}  __device__ __forceinline__ bool operator()(const {name}& a, const {name}& b) const {{\n{less_body}{}  }}\n}};\n",
            packed_types("less_t"),
            if bits > 64 { "    return false;\n" } else { "" }
        ),
        cuda_name: format!("mergepath_user::{name}_less"),
        is_less: rust_less,
        span: order_span,
        declare: None,
        packed_u64: packed_u64.then_some(false),
        field_order: Some(false),
    });
    comparators.push(Comparator {
        rust_type: quote!(::mergepath::Greater),
        name: "greater".into(),
        cuda_def: format!(
            "{}struct {name}_greater {{\n{}  __device__ __forceinline__ bool operator()(const {name}& a, const {name}& b) const {{ return {name}_less()(b, a); }}\n}};\n",
            comparators[0].cuda_def,
            packed_types("greater_t")
        ),
        cuda_name: format!("mergepath_user::{name}_greater"),
        is_less: quote! { <::mergepath::Less as ::mergepath::Comparator<#name>>::is_less(&::mergepath::Less, b, a) },
        span: order_span,
        declare: None,
        packed_u64: packed_u64.then_some(true),
        field_order: Some(true),
    });
    for (ident, cuda, rust) in customs {
        let closure: syn::Expr = rust.parse().map_err(|e| Error::new(rust.span(), format!("`rust` must be a closure |a, b| ...: {e}")))?;
        comparators.push(Comparator {
            rust_type: quote!(#ident),
            name: ident.to_string(),
            cuda_def: format!(
                "struct {name}_{ident} {{\n  __device__ __forceinline__ bool operator()(const {name}& a, const {name}& b) const {{\n    return ({});\n  }}\n}};\n",
                cuda.value()
            ),
            cuda_name: format!("mergepath_user::{name}_{ident}"),
            // Through a generic call, so the closure's parameter types are inferred.
            is_less: quote! {
                fn call<F: Fn(&#name, &#name) -> bool>(f: F, a: &#name, b: &#name) -> bool { f(a, b) }
                call(#closure, a, b)
            },
            span: cuda.span(),
            declare: Some(ident),
            packed_u64: None,
            field_order: None,
        });
    }

    // The CUDA struct, checked against the Rust layout on both sides.
    // Aligned beyond the fields' alignment where the size allows (the largest power of two
    // dividing it, at most 16): the kernels then load and store a key in whole words.
    let device_align = device_align(size);
    let mut decl = format!("struct __align__({device_align}) {name} {{\n");
    let mut checks = format!("static_assert(sizeof({name}) == {size} && alignof({name}) == {device_align}, \"layout of {name}\");\n");
    for Field { cuda_name, cuda_type, len, offset, .. } in &fields {
        let dims = len.map_or(String::new(), |n| format!("[{n}]"));
        decl += &format!("  {cuda_type} {cuda_name}{dims};\n");
        checks += &format!("static_assert(offsetof({name}, {cuda_name}) == {offset}, \"offset of {name}::{cuda_name}\");\n");
    }
    decl += &format!("}};\n{checks}");

    let fatbins = compile(name, &decl, &comparators)?;
    // Keys wider than 8 bytes sort by their field order packed into u64 words
    // (`Comparator::SORT_BY_WORDS`): the words and positions move through the passes, and each
    // key once, at the end.
    let sort_words = (size > 8).then(|| packed_order(&fields, &order_elements(&fields, &order)));
    let vis = &input.vis;
    let impls = comparators.iter().zip(&fatbins).map(|(c, fatbin)| {
        let (rust_type, cname, functor, body) = (&c.rust_type, &c.name, &c.cuda_name, &c.is_less);
        let kernels = match fatbin {
            Some(path) => {
                let path = path.to_string_lossy();
                quote!(include_bytes!(#path))
            }
            None => quote!(&[]),
        };
        let declare = c.declare.as_ref().map(|ident| {
            let doc = format!("Comparator `{ident}` on [`{name}`], from `#[key(comparator(...))]`.");
            quote! {
                #[doc = #doc]
                #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
                #vis struct #ident;
            }
        });
        let packed = match c.packed_u64 {
            Some(descending) => quote!(::core::option::Option::Some(#descending)),
            None => quote!(::core::option::Option::None),
        };
        let by_words = match (&sort_words, c.field_order) {
            (Some(words), Some(descending)) => quote! {
                const SORT_BY_WORDS: ::core::option::Option<::mergepath::RecordOrder> =
                    ::core::option::Option::Some(::mergepath::RecordOrder { fields: &[#(#words),*], descending: #descending });
            },
            _ => quote!(),
        };
        quote! {
            #declare
            impl ::mergepath::Comparator<#name> for #rust_type {
                const NAME: &'static str = #cname;
                const CUDA_FUNCTOR: &'static str = #functor;
                const KERNELS: &'static [u8] = #kernels;
                const PACKED_U64: ::core::option::Option<bool> = #packed;
                #by_words
                fn is_less(&self, a: &#name, b: &#name) -> bool {
                    #body
                }
            }
        }
    });
    let key = key_impls(name, &fields, size, align);
    Ok(quote! {
        #key
        // Read here so cargo rebuilds (and this macro recompiles the kernels) when they change.
        const _: [Option<&str>; 2] = [option_env!("MERGEPATH_CUDA_ARCHS"), option_env!("NVCC")];
        #(#impls)*
    })
}

/// The alignment of a derived key's CUDA struct (`Key::DEVICE_ALIGN`): the largest power of
/// two dividing its size, at most 16 (at least its fields' alignment, which divides the size).
fn device_align(size: usize) -> usize {
    1 << size.trailing_zeros().min(4)
}

/// The impls every derived key has: `Key` (its CUDA twin's name), cudarc's `DeviceRepr` and
/// `ValidAsZeroBits`, the layout checked against the CUDA struct's (size, alignment, field
/// offsets), and the testing kit's `TestKey`.
fn key_impls(name: &Ident, fields: &[Field], size: usize, align: usize) -> TokenStream2 {
    let cuda_type = format!("mergepath_user::{name}");
    let device_align = device_align(size);
    let offset_checks = fields.iter().map(|Field { member, offset, .. }| quote! { assert!(::core::mem::offset_of!(#name, #member) == #offset); });
    let testing = test_key_impl(name, fields);
    quote! {
        #testing
        impl ::mergepath::Key for #name {
            const CUDA_TYPE: &'static str = #cuda_type;
            const DEVICE_ALIGN: usize = #device_align;
        }
        // SAFETY: the struct is repr(C) plain old data (numeric fields, no padding: checked
        // above), so its bytes are the device value and all-zero bytes are a valid value.
        unsafe impl ::mergepath::cudarc::driver::DeviceRepr for #name {}
        // SAFETY: as above.
        unsafe impl ::mergepath::cudarc::driver::ValidAsZeroBits for #name {}
        const _: () = {
            assert!(::core::mem::size_of::<#name>() == #size, "mergepath: CUDA layout mismatch");
            assert!(::core::mem::align_of::<#name>() == #align, "mergepath: CUDA layout mismatch");
            #(#offset_checks)*
        };
    }
}

/// A record wider than the kernels' key tiles: no kernels of its own; its `order` (at most
/// `record_max_elements()`) becomes `Comparator::RECORD` of `Less` and `Greater`, so sorts
/// sort its packed order, word by word, with the `u64` kernels and gather the records by
/// position.
fn record(input: &DeriveInput, fields: &[Field], size: usize, align: usize, order: &[(usize, bool)], order_span: Span, customs: &[(Ident, LitStr, LitStr)]) -> syn::Result<TokenStream2> {
    let name = &input.ident;
    if let Some((ident, _, _)) = customs.first() {
        return Err(Error::new(
            ident.span(),
            format!("`{name}` is {size} bytes, wider than the kernels' key tiles ({MAX_KEY_BYTES} bytes): it sorts by its `order` (with `Less` and `Greater`); custom comparators need keys of at most {MAX_KEY_BYTES} bytes"),
        ));
    }
    let elements = order_elements(fields, order);
    let max_elements = record_max_elements();
    if elements.len() > max_elements {
        return Err(Error::new(
            order_span,
            format!(
                "`{name}` is {size} bytes, wider than the kernels' key tiles ({MAX_KEY_BYTES} bytes): such records sort by their `order` packed into 64-bit words, of at most {max_elements} elements (an array counts each of its elements), and this order has {}; order by fewer fields, or sort a key of at most {MAX_KEY_BYTES} bytes with `sort_indices` and gather the records",
                elements.len()
            ),
        ));
    }
    let packed = packed_order(fields, &elements);
    let rust_less = rust_field_order(fields, order);
    let key = key_impls(name, fields, size, align);
    let impls = [(quote!(::mergepath::Less), "less", false), (quote!(::mergepath::Greater), "greater", true)].map(|(rust_type, cname, descending)| {
        let body = if descending { quote! { <::mergepath::Less as ::mergepath::Comparator<#name>>::is_less(&::mergepath::Less, b, a) } } else { quote! { #rust_less } };
        quote! {
            impl ::mergepath::Comparator<#name> for #rust_type {
                const NAME: &'static str = #cname;
                // No kernels are compiled for a record: its sorts run the u64 ones.
                const CUDA_FUNCTOR: &'static str = "";
                const KERNELS: &'static [u8] = <::mergepath::Less as ::mergepath::Comparator<u64>>::KERNELS;
                const RECORD: ::core::option::Option<::mergepath::RecordOrder> =
                    ::core::option::Option::Some(::mergepath::RecordOrder { fields: &[#(#packed),*], descending: #descending });
                fn is_less(&self, a: &#name, b: &#name) -> bool {
                    #body
                }
            }
        }
    });
    Ok(quote! {
        #key
        #(#impls)*
    })
}

/// The order's elements (field, array element, descending) as the `RecordField`s of a packed
/// order: they fill 64-bit words in order, none straddling two, so the packed words, compared
/// lexicographically, are the field order. In each word the first element is highest, as the
/// packing of keys of at most 64 bits.
fn packed_order(fields: &[Field], elements: &[(usize, usize, bool)]) -> Vec<TokenStream2> {
    let mut words: Vec<Vec<(usize, usize, bool)>> = vec![Vec::new()];
    let mut used = 0;
    for &(i, e, desc) in elements {
        let bits = fields[i].elem_size * 8;
        if used + bits > 64 {
            words.push(Vec::new());
            used = 0;
        }
        words.last_mut().unwrap().push((i, e, desc));
        used += bits;
    }
    let mut packed = Vec::new();
    for (word, members) in words.iter().enumerate() {
        let mut shift: usize = members.iter().map(|&(i, _, _)| fields[i].elem_size * 8).sum();
        for &(i, e, desc) in members {
            let f = &fields[i];
            shift -= f.elem_size * 8;
            let offset = (f.offset + e * f.elem_size) as u32;
            let (bytes, sh, w) = (f.elem_size as u8, shift as u8, word as u8);
            let signed = f.cuda_type.starts_with("int");
            let float = matches!(f.cuda_type, "float" | "double");
            packed.push(quote! {
                ::mergepath::RecordField { offset: #offset, bytes: #bytes, signed: #signed, float: #float, word: #w, shift: #sh, descending: #desc }
            });
        }
    }
    packed
}

/// The order's elements, array elements one by one, first to last, as (field, element,
/// descending).
fn order_elements(fields: &[Field], order: &[(usize, bool)]) -> Vec<(usize, usize, bool)> {
    order.iter().flat_map(|&(i, desc)| (0..fields[i].len.unwrap_or(1)).map(move |e| (i, e, desc))).collect()
}

/// The body of the field order's `is_less(a, b)` in Rust: field by field in `order`, floats in
/// the total order, arrays lexicographically (element 0 first), `desc` reversing a field.
fn rust_field_order(fields: &[Field], order: &[(usize, bool)]) -> TokenStream2 {
    let compares = order.iter().map(|&(i, desc)| {
        let member = &fields[i].member;
        let first = if desc { quote!(::core::cmp::Ordering::Greater) } else { quote!(::core::cmp::Ordering::Less) };
        match fields[i].len {
            None => quote! {
                match ::mergepath::TotalOrd::total_order(&a.#member, &b.#member) {
                    ::core::cmp::Ordering::Equal => {}
                    o => return o == #first,
                }
            },
            Some(_) => quote! {
                for (x, y) in a.#member.iter().zip(b.#member.iter()) {
                    match ::mergepath::TotalOrd::total_order(x, y) {
                        ::core::cmp::Ordering::Equal => {}
                        o => return o == #first,
                    }
                }
            },
        }
    });
    quote! { #(#compares)* false }
}

/// `mergepath::testing::TestKey` for the key, field by field: its strategy draws each field from
/// the field type's strategy; its specials are each field's specials with the other fields
/// zero. Inside `mergepath::__testing_items!`, which keeps it only where mergepath's `testing`
/// feature is on.
fn test_key_impl(name: &Ident, fields: &[Field]) -> TokenStream2 {
    let kit = quote!(::mergepath::testing);
    // Nested pairs `(f1, (f2, (.., fn)))`: proptest's tuples stop at 12 fields.
    let vars: Vec<Ident> = (0..fields.len()).map(|i| Ident::new(&format!("field{i}"), Span::call_site())).collect();
    let (mut strategy, mut pattern) = (None::<TokenStream2>, None::<TokenStream2>);
    for (f, var) in fields.iter().zip(&vars).rev() {
        let elem = &f.elem_ty;
        let element = quote!(<#elem as #kit::TestKey>::key_strategy());
        let field = match f.len {
            None => element,
            Some(n) => quote! {
                #kit::proptest::strategy::Strategy::prop_map(#kit::proptest::collection::vec(#element, #n), |v| <[#elem; #n]>::try_from(v).expect("n elements"))
            },
        };
        (strategy, pattern) = match (strategy, pattern) {
            (Some(s), Some(p)) => (Some(quote!((#field, #s))), Some(quote!((#var, #p)))),
            _ => (Some(field), Some(quote!(#var))),
        };
    }
    let members = fields.iter().map(|f| &f.member);
    let specials = fields.iter().map(|f| {
        let (member, elem) = (&f.member, &f.elem_ty);
        let place = match f.len {
            None => quote!(key.#member),
            Some(_) => quote!(key.#member[0]),
        };
        quote! {
            for special in <#elem as #kit::TestKey>::specials() {
                let mut key: #name = #kit::zeroed();
                #place = special;
                out.push(key);
            }
        }
    });
    quote! {
        ::mergepath::__testing_items! {
            impl #kit::TestKey for #name {
                fn key_strategy() -> #kit::proptest::strategy::BoxedStrategy<Self> {
                    #kit::proptest::strategy::Strategy::boxed(#kit::proptest::strategy::Strategy::prop_map(#strategy, |#pattern| #name { #(#members: #vars),* }))
                }
                fn specials() -> ::std::vec::Vec<Self> {
                    let mut out = ::std::vec::Vec::new();
                    #(#specials)*
                    out
                }
            }
        }
    }
}

/// `"score desc, id asc"` -> (field index, descending).
fn parse_order(spec: &LitStr, fields: &[Field]) -> syn::Result<Vec<(usize, bool)>> {
    let mut out = Vec::new();
    for part in spec.value().split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut words = part.split_whitespace();
        let field = words.next().unwrap();
        let desc = match words.next() {
            None | Some("asc") => false,
            Some("desc") => true,
            Some(other) => return Err(Error::new(spec.span(), format!("expected `asc` or `desc` after `{field}`, found `{other}`"))),
        };
        if words.next().is_some() {
            return Err(Error::new(spec.span(), format!("expected `field [asc|desc]`, found `{part}`")));
        }
        let i = fields.iter().position(|f| f.order_name == field).ok_or_else(|| {
            let known: Vec<String> = fields.iter().map(|f| f.order_name.clone()).collect();
            Error::new(spec.span(), format!("unknown field `{field}` in order (fields: {})", known.join(", ")))
        })?;
        out.push((i, desc));
    }
    if out.is_empty() {
        return Err(Error::new(spec.span(), "empty order: name at least one field"));
    }
    Ok(out)
}

/// Compiles the kernels for every comparator (in parallel, cached); the fatbin paths, or None
/// everywhere on docs.rs.
fn compile(name: &Ident, decl: &str, comparators: &[Comparator]) -> syn::Result<Vec<Option<std::path::PathBuf>>> {
    use mergepath_build::{cached_toolkit_nvcc, cuda_archs, find_nvcc, instantiation_source, mergepath_tuning, KernelBuild, KernelCode};
    if std::env::var_os("DOCS_RS").is_some() {
        return Ok(comparators.iter().map(|_| None).collect());
    }
    let fail = |span: Span, msg: String| Error::new(span, msg);
    let target = std::path::Path::new(env!("MERGEPATH_DERIVE_TARGET_DIR"));
    let nvcc = find_nvcc()
        .map_err(|e| fail(name.span(), e))?
        .or_else(|| cached_toolkit_nvcc(target))
        .ok_or_else(|| fail(name.span(), "mergepath: nvcc not found for #[derive(Key)] (NVCC, CUDA_HOME, CUDA_PATH, PATH, /usr/local/cuda, or the compiler mergepath's build installs)".into()))?;
    let archs = cuda_archs().map_err(|e| fail(name.span(), e))?;
    let tuning = mergepath_tuning().map_err(|e| fail(name.span(), e))?;
    let dir = target.join("mergepath-derive");
    // A macro cannot see the profile of the crate it expands in; it is built in the same
    // profile, so its own debug assertions say whether that is the dev profile.
    let code = KernelCode::for_build(cfg!(debug_assertions)).map_err(|e| fail(name.span(), e))?;
    let build = KernelBuild::new(nvcc, &archs, code, &tuning, &dir.join("include"), target, dir.join("cu")).map_err(|e| fail(name.span(), e))?;
    let units: Vec<(String, String)> = comparators
        .iter()
        .map(|c| {
            let decls = format!("#include <stddef.h>\nnamespace mergepath_user {{\n{decl}{}}}  // namespace mergepath_user\n", c.cuda_def);
            let source = instantiation_source(&format!("key {name}, comparator {}", c.name), &decls, &format!("mergepath_user::{name}"), &c.cuda_name);
            (format!("{name}_{}", c.name), source)
        })
        .collect();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).min(units.len());
    let failures = build.compile(&units, workers);
    if let Some((unit, out)) = failures.first() {
        let c = comparators.iter().find(|c| format!("{name}_{}", c.name) == *unit).unwrap();
        return Err(fail(c.span, format!("nvcc could not compile the kernels of `{name}` with comparator `{}`:\n{}", c.name, nvcc_errors(out))));
    }
    Ok(units.iter().map(|(n, s)| Some(build.fatbin_path(n, s))).collect())
}

/// nvcc's diagnostics from its output (the command line dropped), with the generated file's
/// path cut to its name, so the message reads the same on every machine.
fn nvcc_errors(output: &str) -> String {
    let mut lines = Vec::new();
    for line in output.lines().skip(1).filter(|l| !l.trim().is_empty()).take(24) {
        let mut line = line.to_string();
        if let Some(end) = line.find(".cu") {
            let path = line[..end].rfind(['"', ' ']).map_or(0, |i| i + 1);
            let name = line[..end].rfind('/').map_or(path, |i| i + 1).max(path);
            let file = &line[name..end];
            let file = file.rsplit_once('-').map_or(file, |(stem, pid)| if pid.bytes().all(|b| b.is_ascii_digit()) { stem } else { file });
            line = format!("{}{file}{}", &line[..path], &line[end..]);
        }
        lines.push(line);
    }
    lines.join("\n")
}

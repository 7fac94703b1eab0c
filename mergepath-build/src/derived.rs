//! A `#[derive(Key)]` struct read from its syntax: fields, layout, order and comparators, and
//! their CUDA twins. The derive expands from it; [`Kernels::keys`](crate::Kernels::keys) writes
//! the same CUDA definitions into headers for a crate's own kernels, read from its source files,
//! so a user's kernel and mergepath's kernels compare a key with the same functor.

use crate::keys::{builtin_key, BuiltinKey, BUILTIN_KEYS};
use crate::CONSTANTS;
use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Error, Fields, Ident, LitStr, Type};

/// The widest key the kernels' tiles take (the largest key size in `tuning.tsv`); wider
/// structs are records.
pub const MAX_KEY_BYTES: usize = 16;

/// Elements a record's packed order holds: the contract's `RECORD_MAX_FIELDS` (the kernels'
/// parameter array).
pub fn record_max_elements() -> usize {
    CONSTANTS.iter().find(|c| c.name == "RECORD_MAX_FIELDS").map_or(0, |c| c.value as usize)
}

/// A field of the key struct and its CUDA twin.
#[derive(Clone)]
pub struct KeyField {
    /// How Rust names it: `score`, or `0` in a tuple struct.
    pub member: syn::Member,
    /// How CUDA names it: `score`; `f0` in a tuple struct.
    pub cuda_name: String,
    /// How `order` names it: `score`; `0` in a tuple struct.
    pub order_name: String,
    /// The element type: the field's type, or an array field's element type.
    pub elem_ty: Type,
    /// The element's built-in type.
    pub elem: &'static BuiltinKey,
    /// Elements: `Some(n)` for an array `[T; n]`, else a scalar.
    pub len: Option<usize>,
    /// Byte offset in the repr(C) layout (no padding, so the sum of the sizes before it).
    pub offset: usize,
}

impl KeyField {
    /// Bytes of the whole field.
    pub fn size(&self) -> usize {
        self.elem.size * self.len.unwrap_or(1)
    }

    /// The CUDA expressions of its elements in key `k`: `k.x`, or `k.x[0]`, `k.x[1]`, ....
    fn cuda_elems(&self, k: &str) -> Vec<String> {
        match self.len {
            None => vec![format!("{k}.{}", self.cuda_name)],
            Some(n) => (0..n).map(|j| format!("{k}.{}[{j}]", self.cuda_name)).collect(),
        }
    }
}

/// A `#[key(comparator(Name, cuda = "...", rust = "..."))]`.
#[derive(Clone)]
pub struct CustomComparator {
    /// The comparator type to declare.
    pub ident: Ident,
    /// The CUDA expression in `a` and `b`.
    pub cuda: LitStr,
    /// The Rust closure `|a, b| ...`.
    pub rust: LitStr,
}

/// One comparator's CUDA functor.
#[derive(Clone)]
pub struct CudaComparator {
    /// Its `Comparator::NAME`: `less`, `greater`, or the custom comparator's name.
    pub name: String,
    /// The functor's qualified name (`mergepath_user::Hit_less`).
    pub functor: String,
    /// Its definition, inside `namespace mergepath_user`, after the struct (and, for
    /// `greater`, after `less`'s, which it calls).
    pub definition: String,
    /// `Comparator::PACKED_U64`: the order is that of the packed 8-byte key, ascending (false)
    /// or descending (true).
    pub packed_u64: Option<bool>,
    /// The field order, ascending (false) or descending (true); `None` for a custom comparator.
    pub field_order: Option<bool>,
    /// Where errors about it point.
    pub span: Span,
}

/// A struct under `#[derive(Key)]`, checked: repr(C), no generics, numeric fields or arrays of
/// them, no padding, a valid `order`, comparators named once.
#[derive(Clone)]
pub struct DerivedKey {
    /// The struct's name.
    pub name: Ident,
    /// Its fields, in declaration order.
    pub fields: Vec<KeyField>,
    /// Size and (Rust) alignment in bytes.
    pub size: usize,
    /// Rust's alignment: the largest field element's.
    pub align: usize,
    /// The field order: (field index, descending), most significant first.
    pub order: Vec<(usize, bool)>,
    /// Where errors about the order point.
    pub order_span: Span,
    /// The custom comparators.
    pub customs: Vec<CustomComparator>,
}

impl DerivedKey {
    /// Reads and checks the struct. Errors point at the offending syntax.
    pub fn parse(input: &DeriveInput) -> syn::Result<Self> {
        let name = input.ident.clone();
        if !input.generics.params.is_empty() {
            return Err(Error::new(input.generics.span(), "#[derive(Key)] does not support generic structs"));
        }
        if !has_repr_c(input) {
            return Err(Error::new(name.span(), "#[derive(Key)] needs #[repr(C)], so the CUDA struct has the same layout"));
        }
        let Data::Struct(data) = &input.data else {
            return Err(Error::new(name.span(), "#[derive(Key)] works on structs (named fields or a tuple struct)"));
        };
        let (fields, size, align) = layout(&name, &data.fields)?;
        let (order, customs) = key_attributes(input, &fields)?;
        let (order, order_span) = order.unwrap_or_else(|| ((0..fields.len()).map(|i| (i, false)).collect(), name.span()));
        let key = DerivedKey { name, fields, size, align, order, order_span, customs };
        key.check_record()?;
        Ok(key)
    }

    /// Wider than the kernels' key tiles: no kernels of its own; sorted and compared by its
    /// order packed into `u64` words.
    pub fn is_record(&self) -> bool {
        self.size > MAX_KEY_BYTES
    }

    /// A record's order packs into at most `record_max_elements()` order elements.
    fn check_record(&self) -> syn::Result<()> {
        if !self.is_record() {
            return Ok(());
        }
        let (name, size) = (&self.name, self.size);
        let (elements, max_elements) = (self.order_elements().len(), record_max_elements());
        if elements > max_elements {
            return Err(Error::new(
                self.order_span,
                format!(
                    "`{name}` is {size} bytes, wider than the kernels' key tiles ({MAX_KEY_BYTES} bytes): such records sort by their `order` packed into 64-bit words, of at most {max_elements} elements (an array counts each of its elements), and this order has {elements}; order by fewer fields, or sort a key of at most {MAX_KEY_BYTES} bytes with `sort_indices` and gather the records"
                ),
            ));
        }
        Ok(())
    }

    /// The order's elements, array elements one by one, first to last, as (field, element,
    /// descending).
    pub fn order_elements(&self) -> Vec<(usize, usize, bool)> {
        self.order.iter().flat_map(|&(i, desc)| (0..self.fields[i].len.unwrap_or(1)).map(move |e| (i, e, desc))).collect()
    }

    /// The alignment of the CUDA struct (`Key::DEVICE_ALIGN`): the largest power of two
    /// dividing its size, at most 16 (at least its fields' alignment, which divides the size),
    /// so the kernels load and store a key in whole words.
    pub fn device_align(&self) -> usize {
        1 << self.size.trailing_zeros().min(4)
    }

    /// The CUDA type's qualified name (`Key::CUDA_TYPE`).
    pub fn cuda_type(&self) -> String {
        format!("mergepath_user::{}", self.name)
    }

    /// The order's bits, where its fields are compared as one packed integer.
    pub fn order_bits(&self) -> usize {
        self.order.iter().map(|&(i, _)| self.fields[i].size() * 8).sum()
    }

    /// The order covers every bit of an 8-byte key: the packing is then a bijection, and sorts
    /// sort the packed integers (`Comparator::PACKED_U64`), packing and unpacking once.
    pub fn packed_u64(&self) -> bool {
        let covered: std::collections::BTreeSet<usize> = self.order.iter().map(|&(i, _)| i).collect();
        self.order_bits() == 64 && self.size == 8 && covered.len() == self.fields.len()
    }

    /// The CUDA struct, its layout checked against Rust's by `static_assert`s.
    pub fn cuda_struct(&self) -> String {
        let (name, size, device_align) = (&self.name, self.size, self.device_align());
        let mut decl = format!("struct __align__({device_align}) {name} {{\n");
        let mut checks = format!("static_assert(sizeof({name}) == {size} && alignof({name}) == {device_align}, \"layout of {name}\");\n");
        for f in &self.fields {
            let dims = f.len.map_or(String::new(), |n| format!("[{n}]"));
            decl += &format!("  {} {}{dims};\n", f.elem.cuda, f.cuda_name);
            checks += &format!("static_assert(offsetof({name}, {}) == {}, \"offset of {name}::{}\");\n", f.cuda_name, f.offset, f.cuda_name);
        }
        decl + "};\n" + &checks
    }

    /// The comparators' functors: `less` (the field order), `greater` (its reverse), then the
    /// custom comparators.
    pub fn comparators(&self) -> Vec<CudaComparator> {
        let name = &self.name;
        let packed_u64 = self.packed_u64();
        // A packed-u64 order's comparator names the packing and the u64 order (instantiate.cuh).
        let packed_types = |order: &str| {
            if packed_u64 {
                format!("  using packed_codec = {name}_packing;\n  using packed_order = mergepath::{order}<uint64_t>;\n")
            } else {
                String::new()
            }
        };
        let field_order = |cname: &str, descending: bool, definition: String| CudaComparator {
            name: cname.into(),
            functor: format!("mergepath_user::{name}_{cname}"),
            definition,
            packed_u64: packed_u64.then_some(descending),
            field_order: Some(descending),
            span: self.order_span,
        };
        let mut out = vec![
            field_order(
                "less",
                false,
                format!(
                    "{}struct {name}_less {{\n{}  __device__ __forceinline__ bool operator()(const {name}& a, const {name}& b) const {{\n{}  }}\n}};\n",
                    self.packing(),
                    packed_types("less_t"),
                    self.less_body()
                ),
            ),
            field_order(
                "greater",
                true,
                format!(
                    "struct {name}_greater {{\n{}  __device__ __forceinline__ bool operator()(const {name}& a, const {name}& b) const {{ return {name}_less()(b, a); }}\n}};\n",
                    packed_types("greater_t")
                ),
            ),
        ];
        out.extend(self.customs.iter().map(|c| CudaComparator {
            name: c.ident.to_string(),
            functor: format!("mergepath_user::{name}_{}", c.ident),
            definition: format!(
                "struct {name}_{} {{\n  __device__ __forceinline__ bool operator()(const {name}& a, const {name}& b) const {{\n    return ({});\n  }}\n}};\n",
                c.ident,
                c.cuda.value()
            ),
            packed_u64: None,
            field_order: None,
            span: c.cuda.span(),
        }));
        out
    }

    /// Where the order's fields fit 64 bits: `Name_order_bits(k)`, the fields packed into one
    /// unsigned integer whose `<` is the order (each field as `order_bits`, complemented where
    /// descending, the first field highest), so a comparison is one integer compare; for a
    /// packed-u64 order also `Name_packing`, the packing and its inverse, for the sort passes
    /// that read and write the keys (instantiate.cuh).
    fn packing(&self) -> String {
        let (name, bits) = (&self.name, self.order_bits());
        if bits > 64 {
            return String::new();
        }
        let word = if bits <= 32 { "uint32_t" } else { "uint64_t" };
        let (mut shift, mut parts, mut unpack) = (bits, Vec::new(), String::new());
        for &(i, desc) in &self.order {
            let f = &self.fields[i];
            let t = f.elem.cuda;
            let flip = if desc { format!(" ^ mergepath::order_bits<{t}>::ones") } else { String::new() };
            // An array's elements in order, the first highest.
            for e in f.cuda_elems("k") {
                shift -= f.elem.size * 8;
                parts.push(format!("(({word})(mergepath::order_bits<{t}>::get({e}){flip}) << {shift})"));
                unpack += &format!("    {e} = mergepath::order_bits<{t}>::key((decltype(mergepath::order_bits<{t}>::ones))((p >> {shift}){flip}));\n");
            }
        }
        let mut packing = format!("__device__ __forceinline__ {word} {name}_order_bits(const {name}& k) {{\n  return {};\n}}\n", parts.join(" | "));
        if self.packed_u64() {
            // MERGEPATH_PACKED_U64: instantiate.cuh instantiates the packing kernels.
            packing += &format!(
                "#define MERGEPATH_PACKED_U64 1\n\
                 struct {name}_packing {{\n\
                 \x20 __device__ __forceinline__ static uint64_t encode(const {name}& k) {{ return {name}_order_bits(k); }}\n\
                 \x20 __device__ __forceinline__ static {name} decode(uint64_t p) {{\n    {name} k;\n{unpack}    return k;\n  }}\n}};\n"
            );
        }
        packing
    }

    /// The statements of the field order's `operator()(a, b)`: one packed compare where the
    /// fields fit 64 bits, else field by field, floats in the total order. Byte arrays at
    /// 4-byte aligned places compare four elements at a time: each 32-bit word byte-reversed
    /// (element 0 highest), sign bits flipped for i8, so a key stays in whole-word registers
    /// instead of one register per byte.
    fn less_body(&self) -> String {
        let name = &self.name;
        if self.order_bits() <= 64 {
            return format!("    return {name}_order_bits(a) < {name}_order_bits(b);\n");
        }
        let aligned4 = self.device_align() >= 4;
        let mut body = String::new();
        for &(i, desc) in &self.order {
            let f = &self.fields[i];
            let (x, y) = if desc { ("y", "x") } else { ("x", "y") };
            let t = f.elem.cuda;
            let words = if f.elem.size == 1 && aligned4 && f.offset.is_multiple_of(4) { f.len.unwrap_or(0) / 4 } else { 0 };
            let flip = if t == "int8_t" { " ^ 0x80808080u" } else { "" };
            for w in 0..words {
                let word = |k: &str| format!("(__byte_perm(reinterpret_cast<const uint32_t*>({k}.{})[{w}], 0, 0x0123){flip})", f.cuda_name);
                body += &format!("    {{ const uint32_t x = {}, y = {};\n      if (x != y) return {x} < {y}; }}\n", word("a"), word("b"));
            }
            for (ea, eb) in f.cuda_elems("a").iter().zip(f.cuda_elems("b")).skip(4 * words) {
                body += &format!("    {{ const auto x = mergepath::order_key<{t}>::get({ea}), y = mergepath::order_key<{t}>::get({eb});\n      if (x != y) return {x} < {y}; }}\n");
            }
        }
        body + "    return false;\n"
    }

    /// The key type and comparator functor a kernel module for comparator `c` is instantiated
    /// with: the key's own; for a record (only its custom comparators have modules) the
    /// records' device addresses, compared as the records they point to.
    pub fn instantiation(&self, c: &CudaComparator) -> (String, String) {
        match self.is_record() {
            true => ("uint64_t".into(), format!("mergepath::by_address<{}, {}>", self.cuda_type(), c.functor)),
            false => (self.cuda_type(), c.functor.clone()),
        }
    }

    /// The declarations a kernel module for comparator `c` is compiled with: the struct and
    /// the functors `c` needs, in `namespace mergepath_user`.
    pub fn unit_declarations(&self, c: &CudaComparator) -> String {
        let comparators = self.comparators();
        let mut defs = "#include <stddef.h>\nnamespace mergepath_user {\n".to_string();
        defs += &self.cuda_struct();
        if c.name == "greater" {
            defs += &comparators[0].definition;
        }
        defs += &c.definition;
        defs + "}  // namespace mergepath_user\n"
    }

    /// The header for a crate's own kernels, `mergepath_user/<Name>.cuh`: the struct and every
    /// comparator's functor, as mergepath's kernels for the key are compiled with.
    pub fn header(&self, source: &str) -> String {
        let name = &self.name;
        let comparators = self.comparators();
        let functors: Vec<&str> = comparators.iter().map(|c| c.functor.as_str()).collect();
        let mut header = format!(
            "// Generated by mergepath-build from `{name}` in {source} (#[derive(Key)]): its CUDA twin\n\
             // `mergepath_user::{name}` and comparators {}.\n#pragma once\n#include <stddef.h>\n#include <mergepath/thread/keys.cuh>\nnamespace mergepath_user {{\n",
            functors.join(", ")
        );
        header += &self.cuda_struct();
        for c in &comparators {
            header += &c.definition;
        }
        header + "}  // namespace mergepath_user\n"
    }
}

fn has_repr_c(input: &DeriveInput) -> bool {
    input.attrs.iter().filter(|a| a.path().is_ident("repr")).any(|a| {
        let mut c = false;
        let _ = a.parse_nested_meta(|m| {
            c |= m.path.is_ident("C");
            Ok(())
        });
        c
    })
}

/// The fields and the repr(C) layout (size, alignment); padding would be uninitialized bytes
/// in a Pod key, so it is an error.
fn layout(name: &Ident, fields: &Fields) -> syn::Result<(Vec<KeyField>, usize, usize)> {
    let struct_fields: Vec<&syn::Field> = match fields {
        Fields::Named(named) => named.named.iter().collect(),
        Fields::Unnamed(unnamed) => unnamed.unnamed.iter().collect(),
        Fields::Unit => Vec::new(),
    };
    let mut out = Vec::new();
    let (mut offset, mut align) = (0usize, 1usize);
    for (i, f) in struct_fields.into_iter().enumerate() {
        let (member, cuda_name, order_name) = match &f.ident {
            Some(ident) => (syn::Member::Named(ident.clone()), ident.to_string(), ident.to_string()),
            None => (syn::Member::Unnamed(syn::Index { index: i as u32, span: f.ty.span() }), format!("f{i}"), i.to_string()),
        };
        let (elem_ty, elem, len) = field_type(&f.ty)?;
        if offset % elem.size != 0 {
            return Err(Error::new(f.span(), format!("padding before field `{order_name}` would leak uninitialized bytes: reorder the fields or add an explicit padding field")));
        }
        let field = KeyField { member, cuda_name, order_name, elem_ty, elem, len, offset };
        offset += field.size();
        align = align.max(elem.size);
        out.push(field);
    }
    if out.is_empty() {
        return Err(Error::new(name.span(), "#[derive(Key)] needs at least one field"));
    }
    if offset % align != 0 {
        return Err(Error::new(name.span(), format!("{} bytes of padding at the end of `{name}` would leak uninitialized bytes: add an explicit padding field", align - offset % align)));
    }
    Ok((out, offset, align))
}

type OrderAttribute = Option<(Vec<(usize, bool)>, Span)>;

/// `#[key(order = "...")]` and `#[key(comparator(Name, cuda = "...", rust = "..."))]`.
fn key_attributes(input: &DeriveInput, fields: &[KeyField]) -> syn::Result<(OrderAttribute, Vec<CustomComparator>)> {
    let mut order: OrderAttribute = None;
    let mut customs = Vec::new();
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("key")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("order") {
                let spec: LitStr = meta.value()?.parse()?;
                if order.is_some() {
                    return Err(Error::new(spec.span(), "`order` given twice"));
                }
                order = Some((parse_order(&spec, fields)?, spec.span()));
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
                customs.push(CustomComparator {
                    ident: ident.ok_or_else(|| missing("a name"))?,
                    cuda: cuda.ok_or_else(|| missing("`cuda`"))?,
                    rust: rust.ok_or_else(|| missing("`rust`"))?,
                });
                Ok(())
            } else {
                Err(meta.error("expected `order = \"...\"` or `comparator(...)`"))
            }
        })?;
    }
    Ok((order, customs))
}

/// The built-in numeric type a field has, if it has one.
fn numeric(ty: &Type) -> Option<&'static BuiltinKey> {
    let Type::Path(p) = ty else { return None };
    builtin_key(&p.path.get_ident()?.to_string())
}

/// A field type's element type, built-in twin and array length: `u32`, or `[u32; 4]` (the
/// length an integer literal, at least 1).
fn field_type(ty: &Type) -> syn::Result<(Type, &'static BuiltinKey, Option<usize>)> {
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
    let names: Vec<&str> = BUILTIN_KEYS.iter().map(|k| k.rust).collect();
    let (last, rest) = names.split_last().expect("built-in key types");
    format!("{} or {last}", rest.join(", "))
}

/// `"score desc, id asc"` -> (field index, descending).
fn parse_order(spec: &LitStr, fields: &[KeyField]) -> syn::Result<Vec<(usize, bool)>> {
    let mut out = Vec::new();
    for part in spec.value().split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut words = part.split_whitespace();
        let field = words.next().unwrap_or_default();
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

/// The `#[derive(Key)]` structs of a Rust source file (inline modules included), each read as
/// the derive reads it.
pub fn derived_keys_in(source: &str) -> syn::Result<Vec<DerivedKey>> {
    let file = syn::parse_file(source)?;
    let mut keys = Vec::new();
    collect_keys(&file.items, &mut keys)?;
    Ok(keys)
}

fn collect_keys(items: &[syn::Item], keys: &mut Vec<DerivedKey>) -> syn::Result<()> {
    for item in items {
        match item {
            syn::Item::Struct(s) if derives_key(&s.attrs) => {
                let key = DerivedKey::parse(&DeriveInput::from(s.clone())).map_err(|e| Error::new(e.span(), format!("`{}`: {e}", s.ident)))?;
                keys.push(key);
            }
            syn::Item::Mod(syn::ItemMod { content: Some((_, inner)), .. }) => collect_keys(inner, keys)?,
            _ => {}
        }
    }
    Ok(())
}

/// `#[derive(..., Key)]` or `#[derive(..., mergepath::Key)]`.
fn derives_key(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().filter(|a| a.path().is_ident("derive")).any(|a| {
        let mut key = false;
        let _ = a.parse_nested_meta(|m| {
            key |= m.path.segments.last().is_some_and(|s| s.ident == "Key");
            Ok(())
        });
        key
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = r#"
        use mergepath::Key;
        #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable, mergepath::Key)]
        #[repr(C)]
        #[key(order = "price desc, id")]
        #[key(comparator(ByPrice, cuda = "a.price < b.price", rust = "|a, b| a.price < b.price"))]
        pub struct Trade { pub price: f32, pub id: u32 }
        pub mod inner {
            #[derive(Clone, Copy, Key)]
            #[repr(C)]
            #[key(comparator(ByScore, cuda = "a.score < b.score", rust = "|a, b| a.score < b.score"))]
            pub struct Row { pub label: [u8; 20], pub score: u32 }
        }
        #[derive(Clone, Copy)]
        pub struct NotAKey { x: u8 }
    "#;

    #[test]
    fn finds_the_derived_keys_of_a_source_file_with_their_functors() {
        let keys = derived_keys_in(SOURCE).unwrap();
        let names: Vec<String> = keys.iter().map(|k| k.name.to_string()).collect();
        assert_eq!(names, ["Trade", "Row"]);
        let (trade, row) = (&keys[0], &keys[1]);
        assert!(!trade.is_record() && row.is_record());
        assert!(trade.packed_u64(), "an 8-byte order over every field packs into a u64");
        let functors: Vec<String> = trade.comparators().iter().map(|c| c.functor.clone()).collect();
        assert_eq!(functors, ["mergepath_user::Trade_less", "mergepath_user::Trade_greater", "mergepath_user::Trade_ByPrice"]);
        let header = trade.header("src/keys.rs");
        for part in ["struct __align__(8) Trade {\n  float price;\n  uint32_t id;\n};", "struct Trade_less {", "struct Trade_greater {", "return (a.price < b.price);", "#include <mergepath/thread/keys.cuh>"] {
            assert!(header.contains(part), "header lacks {part:?}:\n{header}");
        }
        assert!(row.header("src/keys.rs").contains("struct __align__(8) Row {\n  uint8_t label[20];\n  uint32_t score;\n};"));
        let by_score = &row.comparators()[2];
        assert_eq!(trade.instantiation(&trade.comparators()[2]), ("mergepath_user::Trade".into(), "mergepath_user::Trade_ByPrice".into()));
        assert_eq!(row.instantiation(by_score), ("uint64_t".into(), "mergepath::by_address<mergepath_user::Row, mergepath_user::Row_ByScore>".into()), "a record's custom comparator compares its addresses");
    }

    #[test]
    fn the_unit_of_greater_defines_less_which_it_calls() {
        let key = &derived_keys_in(SOURCE).unwrap()[0];
        let comparators = key.comparators();
        let greater = key.unit_declarations(&comparators[1]);
        assert!(greater.contains("struct Trade_less {") && greater.contains("struct Trade_greater {"));
        assert!(greater.contains("#define MERGEPATH_PACKED_U64 1\n"), "a packed-u64 order's units instantiate the packing kernels");
        let custom = key.unit_declarations(&comparators[2]);
        assert!(!custom.contains("Trade_less") && !custom.contains("MERGEPATH_PACKED_U64"));
    }

    #[test]
    fn a_struct_the_derive_rejects_is_an_error_here_too() {
        let padded = "#[derive(Key)] #[repr(C)] struct P { a: u8, b: u32 }";
        let message = derived_keys_in(padded).err().expect("padding is an error").to_string();
        assert!(message.contains("padding before field `b`"), "{message}");
        let not_c = "#[derive(Key)] struct Q { a: u32 }";
        assert!(derived_keys_in(not_c).err().expect("repr(C) is required").to_string().contains("#[repr(C)]"));
    }
}

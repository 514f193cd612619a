//! From a config to a compute pipeline: constant injection, shader module, pipeline.

use kerntune_core::{BackendError, CompileRequest, Value};
use std::sync::Arc;

/// Names declared `override` at module scope in a WGSL source.
pub(crate) fn overrides(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code.lines() {
        let t = line.trim_start();
        // `override NAME: T = ...;` or `@id(n) override NAME ...`
        let rest = match t.find("override ") {
            Some(i) if t[..i].trim().is_empty() || t[..i].trim_end().ends_with(')') => &t[i + "override ".len()..],
            _ => continue,
        };
        let name: String = rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if !name.is_empty() {
            out.push(name);
        }
    }
    out
}

fn wgsl_literal(v: &str) -> String {
    match v {
        "true" | "false" => v.to_string(),
        _ => v.to_string(),
    }
}

/// The source with `const NAME = VALUE;` lines for every define and scalar that is not an
/// `override` in the source, and the pipeline constants for those that are. Returns the new
/// source, the pipeline constants, and how many lines were prepended (to map compiler line
/// numbers back to the user's file).
///
/// WGSL's directives (`enable f16;`, `requires …;`, `diagnostic(…);`) must come before every
/// declaration, so the source's own are moved above the `const` lines (each left as an empty
/// line where it was, so that the lines after it keep their numbers less the shift).
pub fn inject_constants(code: &str, defines: &[(String, String)], scalars: &[(String, Value)]) -> (String, Vec<(String, f64)>, usize) {
    let ov = overrides(code);
    let (directives, code) = hoist_directives(code);
    let mut header = directives.concat();
    let mut constants = Vec::new();
    let mut lines = directives.len();
    let mut put = |name: &str, text: String, num: Option<f64>| {
        if ov.iter().any(|o| o == name) {
            if let Some(n) = num {
                constants.push((name.to_string(), n));
            }
        } else {
            header.push_str(&format!("const {name} = {text};\n"));
            lines += 1;
        }
    };
    for (k, v) in defines {
        let num = v.parse::<f64>().ok().or(match v.as_str() {
            "true" => Some(1.0),
            "false" => Some(0.0),
            _ => None,
        });
        put(k, wgsl_literal(v), num);
    }
    for (k, v) in scalars {
        let text = match v {
            Value::Float(f) => format!("{f:?}"),
            Value::Int(i) => i.to_string(),
            Value::Bool(b) => b.to_string(),
            Value::Str(s) => s.clone(),
        };
        put(k, text, v.as_f64());
    }
    (format!("{header}{code}"), constants, lines)
}

/// The source's leading global directives (each line with its newline) and the source with each
/// of those lines emptied. Directives are the lines before the first declaration that start with
/// `enable`, `requires` or `diagnostic`; blank and `//` comment lines between them are skipped.
fn hoist_directives(code: &str) -> (Vec<String>, std::borrow::Cow<'_, str>) {
    let is_directive = |line: &str| {
        let word = line.trim().split(|c: char| !c.is_alphanumeric() && c != '_').next().unwrap_or("");
        matches!(word, "enable" | "requires" | "diagnostic")
    };
    let mut directives = Vec::new();
    let mut end = 0;
    for line in code.split_inclusive('\n') {
        let t = line.trim();
        if is_directive(line) {
            directives.push(format!("{}\n", line.trim_end()));
        } else if !(t.is_empty() || t.starts_with("//")) {
            break;
        }
        end += line.len();
    }
    if directives.is_empty() {
        return (directives, code.into());
    }
    // Each directive's line left empty (its newline kept), so later lines keep their numbers.
    let head: String = code[..end]
        .split_inclusive('\n')
        .map(|line| {
            if !is_directive(line) {
                line
            } else if line.ends_with('\n') {
                "\n"
            } else {
                ""
            }
        })
        .collect();
    (directives, format!("{head}{}", &code[end..]).into())
}

/// The pipeline layout of a kernel whose buffer arguments are used as `access` says: storage
/// buffers bound in argument order at `@group(0) @binding(i)`, read-only where only read.
pub(crate) fn pipeline_layout(device: &wgpu::Device, access: &[kerntune_core::Access]) -> wgpu::PipelineLayout {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = access
        .iter()
        .enumerate()
        .map(|(i, a)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: wgpu::BufferBindingType::Storage { read_only: *a == kerntune_core::Access::Read },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    let bgl = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some("kerntune args"), entries: &entries });
    device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor { label: Some("kerntune"), bind_group_layouts: &[Some(&bgl)], immediate_size: 0 })
}

/// The runtime checks a source's options leave on (see
/// [`kerntune_core::spec::source::WGSL_OPTIONS`]): all of them unless turned off by name.
pub(crate) fn runtime_checks(options: &[String]) -> Result<wgpu::ShaderRuntimeChecks, String> {
    let mut checks = wgpu::ShaderRuntimeChecks::checked();
    for o in options {
        match o.as_str() {
            "no-loop-bounding" => checks.force_loop_bounding = false,
            "no-bounds-checks" => checks.bounds_checks = false,
            "no-int-div-checks" => checks.int_div_checks = false,
            "unchecked" => {
                checks.force_loop_bounding = false;
                checks.bounds_checks = false;
                checks.int_div_checks = false;
            }
            _ => {
                return Err(kerntune_core::spec::source::check_options("wgsl", std::slice::from_ref(o))
                    .err()
                    .unwrap_or_else(|| format!("`{o}` is not a WGSL option")))
            }
        }
    }
    Ok(checks)
}

/// What a pipeline is built from: the source with its constants injected, the pipeline
/// constants, the entry point and the bindings. The parent builds it for every config; a worker
/// process ([`crate::worker`]) receives it serialised and builds the same pipeline on its own
/// device (a wgpu pipeline cannot travel between processes).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Recipe {
    /// The kernel's name (the pipeline's label).
    name: String,
    /// Its file, for messages.
    file: String,
    /// The source with `const` lines prepended.
    pub(crate) code: String,
    /// How many lines were prepended (compiler line numbers are mapped back by it).
    shift: usize,
    /// Values of the source's `override` constants.
    constants: Vec<(String, f64)>,
    entry: String,
    /// The runtime checks' options (see [`runtime_checks`]).
    options: Vec<String>,
    /// Each buffer argument's access, in binding order.
    pub(crate) access: Vec<kerntune_core::Access>,
    /// The config's defines and scalars as `NAME=VALUE`, for compile errors.
    config: Vec<String>,
    /// The scalar arguments' names (the `const` declarations they became), for a binding
    /// error's hint; absent in images of earlier builds.
    #[serde(default)]
    scalars: Vec<String>,
}

impl Recipe {
    /// The recipe of a compile request.
    pub(crate) fn new(req: &CompileRequest<'_>) -> Recipe {
        let (code, constants, shift) = inject_constants(req.code, req.defines, req.scalars);
        Recipe {
            name: req.source.name.clone(),
            file: req.source.path.clone().unwrap_or_else(|| "<wgsl>".into()),
            code,
            shift,
            constants,
            entry: req.source.entry().to_string(),
            options: req.source.options.clone(),
            access: req.buffers.to_vec(),
            config: req.defines.iter().map(|(k, v)| format!("{k}={v}")).chain(req.scalars.iter().map(|(k, v)| format!("{k}={v}"))).collect(),
            scalars: req.scalars.iter().map(|(k, _)| k.clone()).collect(),
        }
    }
}

/// naga's rendering of an error (`┌─ wgsl:17:34`, then `17 │     let total = …`) with the
/// user's file and line numbers: those of the compiled source count the `shift` lines of
/// injected constants above the user's first (the same error read `syn.wgsl:14:34` and
/// `wgsl:17:34`, `17 │`). Lines at or above the shift are left as they are.
fn renumber(message: &str, shift: usize, file: &str) -> String {
    let lines: Vec<String> = message
        .lines()
        .map(|line| {
            if let Some((head, at)) = line.split_once("┌─ wgsl:") {
                let (num, rest) = at.split_at(at.find(|c: char| !c.is_ascii_digit()).unwrap_or(at.len()));
                if let Some(n) = num.parse::<usize>().ok().filter(|&n| n > shift) {
                    return format!("{head}┌─ {file}:{}{rest}", n - shift);
                }
            } else if let Some((num, rest)) = line.split_once(" │") {
                let digits = num.trim_start();
                if let Some(n) = digits.parse::<usize>().ok().filter(|&n| n > shift) {
                    return format!("{:>width$} │{rest}", n - shift, width = num.len());
                }
            }
            line.to_string()
        })
        .collect();
    let mut out = lines.join("\n");
    if message.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// A wgpu error as one message: wgpu's "Validation Error / Caused by:" frame dropped and its
/// chain of contexts joined, so that the cause (e.g. "Unable to find entry point 'f'") is in
/// the first line a report shows, not the fifth.
pub(crate) fn describe(e: &wgpu::Error) -> String {
    let text = e.to_string();
    let parts: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty() && *l != "Caused by:" && *l != "Validation Error").collect();
    if parts.is_empty() {
        return text.trim().to_string();
    }
    parts.join(": ")
}

/// The `@compute` functions of a WGSL source, by a scan of its text (for a message naming the
/// entry points there are when the one asked for is missing).
fn compute_entry_points(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest.find("@compute") {
        rest = &rest[i + "@compute".len()..];
        if let Some(f) = rest.find("fn ") {
            let name: String = rest[f + 3..].trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// What to do about a shader whose buffer declaration does not fit the bindings kerntune
/// makes from the spec — every buffer argument a storage buffer at `@group(0) @binding(i)`, in
/// `[[args]]` order among the buffers, read-only where its `access` is `read` — from wgpu's
/// message (`Shader global ResourceBinding { group: 0, binding: 1 } is not available in the
/// pipeline layout: …`), naming the shader's variable there; `None` for other errors.
fn binding_hint(message: &str, code: &str, access: &[kerntune_core::Access], scalars: &[String]) -> Option<String> {
    let at = &message[message.find("ResourceBinding { group: ")? + "ResourceBinding { group: ".len()..];
    let number = |s: &str| s.chars().take_while(char::is_ascii_digit).collect::<String>().parse::<usize>().ok();
    let group = number(at)?;
    let binding = number(&at[at.find("binding: ")? + "binding: ".len()..])?;
    let reason = &at[at.find("pipeline layout: ").map_or(at.len(), |i| i + "pipeline layout: ".len())..];
    let var = declared_at(code, group, binding)
        .map_or_else(|| format!("@group({group}) @binding({binding})"), |v| format!("`{v}` at @group({group}) @binding({binding})"));
    let buffers = access.len();
    let ordinal = |i: usize| match (i + 1) % 10 {
        1 if (i + 1) % 100 != 11 => format!("{}st", i + 1),
        2 if (i + 1) % 100 != 12 => format!("{}nd", i + 1),
        3 if (i + 1) % 100 != 13 => format!("{}rd", i + 1),
        _ => format!("{}th", i + 1),
    };
    if reason.starts_with("Binding is missing") {
        let uniform = declared_space(code, group, binding).is_some_and(|s| s == "uniform");
        return Some(if uniform {
            let named = match scalars {
                [] => "the spec's scalar arguments (none here)".to_string(),
                s => format!("the spec's scalar arguments ({})", s.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")),
            };
            format!(
                "the shader declares {var} as a `var<uniform>`, and kerntune binds no uniform buffers: {named} reach the shader as `const` declarations of their names; remove the uniform and use those names, or make it a buffer argument (`var<storage, read>` and an [[args]] entry with `len`)"
            )
        } else if group != 0 {
            format!("kerntune binds the spec's buffer arguments at @group(0) only; declare {var} in group 0")
        } else {
            format!(
                "the shader declares {var}, but the spec has {buffers} buffer argument(s), bound at @binding(0){} in [[args]] order: add the buffer it is (an [[args]] entry with `len`), or remove the declaration",
                if buffers > 1 { format!(" … @binding({})", buffers - 1) } else { String::new() }
            )
        });
    }
    let access = access.get(binding).filter(|_| group == 0)?;
    if reason.contains("doesn't match the shader Storage") && reason.contains("LOAD | STORE") && *access == kerntune_core::Access::Read {
        return Some(format!(
            "the shader writes {var} (`var<storage, read_write>`), but the {} buffer argument of [[args]], bound there, has `access = \"read\"` (the default), which binds it read-only: give that argument `access = \"readwrite\"` (or `\"write\"` when the kernel does not read it first), or declare it `var<storage, read>`",
            ordinal(binding)
        ));
    }
    if reason.contains("doesn't match the shader Uniform") || reason.contains("does not match the pipeline binding") {
        return Some(format!(
            "kerntune binds {var}, the {} buffer argument of [[args]], as a storage buffer: declare it `var<storage, read>` (or `read_write`); scalar arguments reach the shader as constants by their names",
            ordinal(binding)
        ));
    }
    None
}

/// The name of the variable a WGSL source declares at `@group(group) @binding(binding)`, by a
/// scan of its declarations' text.
fn declared_at(code: &str, group: usize, binding: usize) -> Option<String> {
    let (_, rest) = declaration_at(code, group, binding)?;
    let rest = rest.find('>').map_or(rest.as_str(), |i| &rest[i + 1..]);
    let name: String = rest.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (!name.is_empty()).then_some(name)
}

/// The address space (`storage`, `uniform`) of the variable a WGSL source declares at
/// `@group(group) @binding(binding)`; `None` where it names none (a texture, a sampler).
fn declared_space(code: &str, group: usize, binding: usize) -> Option<String> {
    let (_, rest) = declaration_at(code, group, binding)?;
    let inner = rest.trim_start().strip_prefix('<')?;
    let space: String = inner.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    (!space.is_empty()).then_some(space)
}

/// The declaration at `@group(group) @binding(binding)` of a WGSL source, comments dropped and
/// its whitespace made single spaces, with what follows its `var` keyword.
fn declaration_at(code: &str, group: usize, binding: usize) -> Option<(String, String)> {
    code.split([';', '{', '}']).find_map(|decl| {
        let flat: String = decl.lines().map(|l| l.split("//").next().unwrap_or("")).flat_map(str::split_whitespace).collect::<Vec<_>>().join(" ");
        let attr = |name: &str| flat.find(&format!("@{name}(")).and_then(|i| flat[i + name.len() + 2..].split(')').next()?.trim().parse::<usize>().ok());
        if attr("group")? != group || attr("binding")? != binding {
            return None;
        }
        let rest = flat[flat.find("var")? + 3..].to_string();
        Some((flat, rest))
    })
}

/// What a compiled config keeps for a worker process to build it again.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ship {
    /// Nothing: the kernel runs in this process.
    Nothing,
    /// The recipe, and with `pipeline_cache` the driver's compiled code too (a pipeline cache's
    /// data, from a cache made for this one pipeline), so that the worker's build is a cache hit
    /// instead of a second compile on the measuring path. The driver's own disk cache does not
    /// do it: on two H200s the worker of one GPU compiled every pipeline again (75 ms each)
    /// while the other's builds took 1 ms.
    Recipe { pipeline_cache: bool },
}

/// Compiles one config into a pipeline on `device`, keeping what a worker process builds it
/// from as `ship` says; with the bytes of workgroup memory it declares ([`workgroup_bytes`]).
pub(crate) fn compile(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    req: &CompileRequest<'_>,
    ship: Ship,
) -> Result<(WgpuKernel, Option<u64>), BackendError> {
    let recipe = Recipe::new(req);
    let (device, layout) = (device.clone(), layout.clone());
    // Shader and pipeline creation (naga, then the driver's compiler) may be stopped waiting
    // for, like NVRTC: see `abandonable`. The error scope is pushed and popped on that thread.
    kerntune_core::backend::abandonable(req.abandon, move || {
        let kernel = match ship {
            Ship::Nothing => WgpuKernel::new(build(&device, &layout, &recipe, None)?, Vec::new(), lengths_asked(&recipe.code, recipe.access.len())),
            Ship::Recipe { pipeline_cache } => {
                // SAFETY: no initial data, so nothing of unknown origin reaches the driver.
                let cache = pipeline_cache
                    .then(|| unsafe { device.create_pipeline_cache(&wgpu::PipelineCacheDescriptor { label: Some("kerntune"), data: None, fallback: true }) });
                let pipeline = build(&device, &layout, &recipe, cache.as_ref())?;
                let compiled = cache.and_then(|c| c.get_data()).unwrap_or_default();
                tracing::trace!(bytes = compiled.len(), "pipeline cache data for the worker");
                WgpuKernel::new(pipeline, Image::encode(&recipe, &compiled)?, lengths_asked(&recipe.code, recipe.access.len()))
            }
        };
        Ok((kernel, workgroup_bytes(&recipe.code, &recipe.entry, &recipe.constants)))
    })
}

/// The bytes of workgroup memory (`var<workgroup>`) the entry point `entry` of `code` uses, the
/// pipeline constants `constants` put in (an array sized by an `override`), as naga lays them
/// out: the compiler's resource report a CUDA kernel's static shared memory is, so that a config
/// declaring more than the adapter allows is pruned by it. wgpu does not check it when it makes
/// the pipeline: a 256 KiB array on llvmpipe (32 KiB allowed) was measured and could win.
/// `None` where naga cannot tell.
pub(crate) fn workgroup_bytes(code: &str, entry: &str, constants: &[(String, f64)]) -> Option<u64> {
    use wgpu::naga;
    let module = naga::front::wgsl::parse_str(code).ok()?;
    let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all()).validate(&module).ok()?;
    let mut pipeline_constants = naga::back::PipelineConstants::default();
    for (name, value) in constants {
        pipeline_constants.insert(name.clone(), *value);
    }
    let (module, info) =
        naga::back::pipeline_constants::process_overrides(&module, &info, Some((naga::ShaderStage::Compute, entry)), &pipeline_constants).ok()?;
    let at = module.entry_points.iter().position(|e| e.name == entry && e.stage == naga::ShaderStage::Compute)?;
    let used = info.get_entry_point(at);
    let ctx = module.to_ctx();
    Some(
        module
            .global_variables
            .iter()
            .filter(|(handle, var)| var.space == naga::AddressSpace::WorkGroup && !used[*handle].is_empty())
            .map(|(_, var)| u64::from(module.types[var.ty].inner.size(ctx)))
            .sum(),
    )
}

/// A kernel's image for a worker process: the length of the recipe's JSON (8 bytes, little
/// endian), the JSON, then the pipeline cache data (empty when there is none).
pub(crate) struct Image<'a> {
    pub(crate) recipe: Recipe,
    pub(crate) pipeline_cache: &'a [u8],
}

impl<'a> Image<'a> {
    fn encode(recipe: &Recipe, pipeline_cache: &[u8]) -> Result<Vec<u8>, BackendError> {
        let json = serde_json::to_vec(recipe).map_err(BackendError::other)?;
        let mut out = Vec::with_capacity(8 + json.len() + pipeline_cache.len());
        out.extend_from_slice(&(json.len() as u64).to_le_bytes());
        out.extend_from_slice(&json);
        out.extend_from_slice(pipeline_cache);
        Ok(out)
    }

    pub(crate) fn decode(image: &'a [u8]) -> Result<Image<'a>, String> {
        let (len, rest) = image.split_first_chunk::<8>().ok_or("it is shorter than its header")?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok().filter(|&l| l <= rest.len()).ok_or("its recipe's length is past its end")?;
        let recipe = serde_json::from_slice(&rest[..len]).map_err(|e| e.to_string())?;
        Ok(Image { recipe, pipeline_cache: &rest[len..] })
    }
}

/// Builds the pipeline a recipe describes on `device`.
pub(crate) fn build(
    device: &wgpu::Device,
    layout: &wgpu::PipelineLayout,
    r: &Recipe,
    cache: Option<&wgpu::PipelineCache>,
) -> Result<wgpu::ComputePipeline, BackendError> {
    let failed = |log: String| BackendError::CompileFailed { log, options: r.config.clone() };
    let file = &r.file;
    let checks = runtime_checks(&r.options).map_err(|log| failed(format!("{file}: {log}")))?;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let desc = wgpu::ShaderModuleDescriptor { label: Some(&r.name), source: wgpu::ShaderSource::Wgsl(r.code.as_str().into()) };
    // SAFETY: the checks are the ones the spec's author turned off (`[kernel] options`),
    // each one a promise about their kernel (its loops end, its indices stay in bounds, it
    // never divides by zero) that wgpu's documentation asks of a trusted module; with none
    // turned off this is `create_shader_module`.
    let module = unsafe { device.create_shader_module_trusted(desc, checks) };
    let info = pollster::block_on(module.get_compilation_info());
    let mut log = String::new();
    for m in &info.messages {
        if m.message_type == wgpu::CompilationMessageType::Error {
            match &m.location {
                Some(loc) if loc.line_number as usize > r.shift => {
                    log.push_str(&format!("{file}:{}:{}: {}\n", loc.line_number as usize - r.shift, loc.line_position, renumber(&m.message, r.shift, file)))
                }
                Some(_) => log.push_str(&format!("{file} (its directives, or the injected constants): {}\n", m.message)),
                None => log.push_str(&format!("{file}: {}\n", m.message)),
            }
        }
    }
    if !log.is_empty() {
        drop(pollster::block_on(scope.pop()));
        if hoist_directives(&r.code).0.iter().any(|d| d.contains("f16")) && !device.features().contains(wgpu::Features::SHADER_F16) {
            // First: a report keeps a failure's first lines.
            log.insert_str(
                0,
                &format!("{file}: the kernel enables f16, and this adapter has no half-precision shaders (wgpu's SHADER_F16); tune it on an adapter that has them (`kerntune devices` says which), or with f32\n"),
            );
        }
        return Err(failed(log));
    }
    let const_refs: Vec<(&str, f64)> = r.constants.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(&r.name),
        layout: Some(layout),
        module: &module,
        entry_point: Some(&r.entry),
        compilation_options: wgpu::PipelineCompilationOptions { constants: &const_refs, zero_initialize_workgroup_memory: false },
        cache,
    });
    if let Some(e) = pollster::block_on(scope.pop()) {
        let mut log = format!("{file}: {}", describe(&e));
        if let Some(hint) = binding_hint(&log, &r.code, &r.access, &r.scalars) {
            log.push_str(&format!("; {hint}"));
        } else if matches!(&e, wgpu::Error::Validation { description, .. } if description.contains("Unable to find entry point")) {
            let there = compute_entry_points(&r.code);
            log.push_str(&format!(
                "; the kernel's name is its entry point: rename the `@compute` function or set [kernel] name to {}",
                if there.is_empty() {
                    "one of its `@compute` functions".to_string()
                } else {
                    there.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(" or ")
                }
            ));
        }
        return Err(failed(log));
    }
    Ok(pipeline)
}

/// Which of `n` bindings (in binding order, group 0) a WGSL source asks the length of
/// (`arrayLength`, of the array or of a struct whose last member it is): those are bound at the
/// buffer's own size, without the guard after it (see [`crate::guard`]), so that the length
/// the kernel reads is the spec's. A source naga cannot read (its compile fails anyway), or a
/// length asked through a pointer argument, marks every binding.
pub(crate) fn lengths_asked(code: &str, n: usize) -> Vec<bool> {
    use wgpu::naga::Expression;
    let Ok(module) = wgpu::naga::front::wgsl::parse_str(code) else { return vec![true; n] };
    let mut asked = vec![false; n];
    let functions = module.functions.iter().map(|(_, f)| f).chain(module.entry_points.iter().map(|e| &e.function));
    for f in functions {
        for (_, e) in f.expressions.iter() {
            let Expression::ArrayLength(mut at) = *e else { continue };
            loop {
                match f.expressions[at] {
                    Expression::AccessIndex { base, .. } | Expression::Access { base, .. } => at = base,
                    Expression::GlobalVariable(g) => {
                        if let Some(b) = module.global_variables[g].binding.filter(|b| b.group == 0 && (b.binding as usize) < n) {
                            asked[b.binding as usize] = true;
                        }
                        break;
                    }
                    _ => return vec![true; n],
                }
            }
        }
    }
    asked
}

/// A compiled config: its pipeline, and where it runs in a worker process, the recipe the
/// worker builds it from.
pub struct WgpuKernel {
    pub(crate) pipeline: Arc<wgpu::ComputePipeline>,
    /// Unique in this process: the worker loads each kernel once under it.
    pub(crate) id: u64,
    /// The [`Image`] a worker process builds it from; empty where kernels run in this process.
    pub(crate) image: Vec<u8>,
    /// Which bindings the kernel asks the length of ([`lengths_asked`]).
    pub(crate) lengths: Vec<bool>,
}

impl WgpuKernel {
    pub(crate) fn new(pipeline: wgpu::ComputePipeline, image: Vec<u8>, lengths: Vec<bool>) -> WgpuKernel {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        WgpuKernel { pipeline: Arc::new(pipeline), id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed), image, lengths }
    }
}

impl Drop for WgpuKernel {
    fn drop(&mut self) {
        if !self.image.is_empty() {
            // Workers that loaded it unload it with their next request.
            kerntune_core::worker::kernel_dropped(self.id);
        }
        if crate::device::launch_never_ended() {
            // Its pipeline is left undestroyed: a driver may wait for the launch that never
            // ended before destroying one (see `device::leave_undestroyed`).
            crate::device::leave_undestroyed(self.pipeline.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// naga's snippet of an error in the user's source carries the user's file and line numbers,
    /// not those of the source with the constants injected above it.
    #[test]
    fn an_error_s_snippet_has_the_user_s_line_numbers() {
        let naga = "Shader 'triad' parsing error: expected expression, found \";\"\n   ┌─ wgsl:17:34\n   │\n17 │     let total = nwg.x * WG_SIZE +;\n   │                                  ^ expected expression\n";
        assert_eq!(
            renumber(naga, 3, "./syn.wgsl"),
            "Shader 'triad' parsing error: expected expression, found \";\"\n   ┌─ ./syn.wgsl:14:34\n   │\n14 │     let total = nwg.x * WG_SIZE +;\n   │                                  ^ expected expression\n"
        );
        // An injected constant's line stays as it is.
        let injected = "parsing error: Unexpected runtime-expression\n  ┌─ wgsl:1:28\n  │\n1 │ const B = x;\n";
        assert_eq!(renumber(injected, 3, "k.wgsl"), injected);
        // A two-digit line that becomes one keeps its gutter's width.
        assert!(renumber("  ┌─ wgsl:10:2\n10 │ x\n", 3, "k.wgsl").ends_with(" 7 │ x\n"), "{}", renumber("  ┌─ wgsl:10:2\n10 │ x\n", 3, "k.wgsl"));
    }

    /// The workgroup memory an entry point uses: its arrays and atomics, an array an override
    /// sizes at the pipeline constant's value, and not what another entry point uses.
    #[test]
    fn the_workgroup_memory_an_entry_point_uses_is_counted() {
        let code = "override T: u32 = 16u;\nconst TILE = 1024;\nvar<workgroup> tile: array<f32, TILE>;\nvar<workgroup> sized: array<vec4<f32>, T>;\nvar<workgroup> count: atomic<u32>;\nvar<workgroup> other: array<f32, 4096>;\n\
            @compute @workgroup_size(64) fn k(@builtin(local_invocation_index) i: u32) { tile[i] = 1.0; sized[i] = vec4<f32>(tile[i]); atomicAdd(&count, 1u); }\n\
            @compute @workgroup_size(64) fn j(@builtin(local_invocation_index) i: u32) { other[i] = 2.0; }\n";
        assert_eq!(workgroup_bytes(code, "k", &[]), Some(4 * 1024 + 16 * 16 + 4));
        assert_eq!(workgroup_bytes(code, "k", &[("T".into(), 256.0)]), Some(4 * 1024 + 16 * 256 + 4));
        assert_eq!(workgroup_bytes(code, "j", &[]), Some(4 * 4096));
        assert_eq!(workgroup_bytes("@compute @workgroup_size(1) fn k() {}", "k", &[]), Some(0));
        assert_eq!(workgroup_bytes("not wgsl", "k", &[]), None);
    }

    /// A binding whose length the kernel asks is bound at its own size; a struct's runtime
    /// array counts as its binding; a length asked through a pointer argument, or a source
    /// naga cannot read, marks every binding.
    #[test]
    fn the_bindings_whose_length_a_kernel_asks_are_found() {
        let decl = "@group(0) @binding(0) var<storage, read> x: array<f32>;\nstruct S { n: u32, v: array<f32> }\n@group(0) @binding(1) var<storage, read_write> s: S;\n@group(0) @binding(2) var<storage, read_write> y: array<f32>;\n";
        let kernel = |body: &str| format!("{decl}@compute @workgroup_size(64)\nfn k(@builtin(global_invocation_id) g: vec3<u32>) {{\n{body}\n}}\n");
        assert_eq!(lengths_asked(&kernel("y[g.x] = x[g.x];"), 3), [false, false, false]);
        assert_eq!(lengths_asked(&kernel("if (g.x < arrayLength(&y)) { y[g.x] = x[g.x]; }"), 3), [false, false, true]);
        assert_eq!(lengths_asked(&kernel("if (g.x < arrayLength(&s.v)) { s.v[g.x] = x[g.x]; }"), 3), [false, true, false]);
        // In a helper function too.
        let helper = format!("{decl}fn len() -> u32 {{ return arrayLength(&x); }}\n@compute @workgroup_size(64)\nfn k(@builtin(global_invocation_id) g: vec3<u32>) {{ if (g.x < len()) {{ y[g.x] = x[g.x]; }} }}\n");
        assert_eq!(lengths_asked(&helper, 3), [true, false, false]);
        assert_eq!(lengths_asked("this is not WGSL", 2), [true, true]);
    }

    #[test]
    fn overrides_become_pipeline_constants_the_rest_consts() {
        let code = "override WG: u32 = 64;\n@id(3) override TILE: u32;\n@compute @workgroup_size(WG) fn main() {}\n";
        assert_eq!(overrides(code), vec!["WG", "TILE"]);
        let defines = vec![("WG".to_string(), "128".to_string()), ("PER".to_string(), "4".to_string()), ("TILE".into(), "8".into())];
        let scalars = vec![("a".to_string(), Value::Float(2.0)), ("n".to_string(), Value::Int(1024))];
        let (src, consts, shift) = inject_constants(code, &defines, &scalars);
        assert_eq!(consts, vec![("WG".to_string(), 128.0), ("TILE".to_string(), 8.0)]);
        assert!(src.starts_with("const PER = 4;\nconst a = 2.0;\nconst n = 1024;\noverride WG"), "{src}");
        assert_eq!(shift, 3);
    }

    #[test]
    fn directives_stay_above_the_injected_constants_and_lines_keep_their_numbers() {
        let code =
            "// half precision\nenable f16;\n  requires readonly_and_readwrite_storage_textures;\n\n@compute @workgroup_size(1) fn k() {}\n// enable nothing\n";
        let (src, _, shift) = inject_constants(code, &[("W".into(), "2".into())], &[]);
        assert_eq!(src.lines().take(3).collect::<Vec<_>>(), ["enable f16;", "  requires readonly_and_readwrite_storage_textures;", "const W = 2;"]);
        assert_eq!(shift, 3);
        // Line 5 of the user's file is line 5 + shift of the compiled source; the directives
        // are empty lines where they were, and a later comment is left alone.
        let lines: Vec<&str> = src.lines().collect();
        assert_eq!(lines[5 - 1 + shift], "@compute @workgroup_size(1) fn k() {}");
        assert_eq!((lines[1 + shift], lines[2 + shift]), ("", ""));
        assert_eq!(lines[6 - 1 + shift], "// enable nothing");
        assert_eq!(inject_constants("fn f() {}", &[], &[]).0, "fn f() {}", "a source without directives is unchanged");
    }

    #[test]
    fn a_workers_image_carries_the_recipe_and_the_pipeline_cache_and_a_bad_one_is_named() {
        let recipe = Recipe {
            name: "k".into(),
            file: "k.wgsl".into(),
            code: "const N = 4;\n@compute @workgroup_size(1) fn k() {}\n".into(),
            shift: 1,
            constants: vec![("WG".into(), 64.0)],
            entry: "k".into(),
            options: vec!["no-loop-bounding".into()],
            access: vec![kerntune_core::Access::Read, kerntune_core::Access::ReadWrite],
            config: vec!["WG=64".into(), "N=4".into()],
            scalars: vec!["N".into()],
        };
        for cache in [&[][..], &[7u8, 0, 255, 1][..]] {
            let bytes = Image::encode(&recipe, cache).unwrap();
            let back = Image::decode(&bytes).unwrap();
            assert_eq!(serde_json::to_string(&back.recipe).unwrap(), serde_json::to_string(&recipe).unwrap());
            assert_eq!(back.pipeline_cache, cache);
        }
        // An earlier build's recipe, without the scalars' names, still reads.
        let mut old = serde_json::to_value(&recipe).unwrap();
        old.as_object_mut().unwrap().remove("scalars");
        assert!(serde_json::from_value::<Recipe>(old).unwrap().scalars.is_empty());
        let bytes = Image::encode(&recipe, &[1, 2, 3]).unwrap();
        assert_eq!(Image::decode(&bytes[..5]).err().unwrap(), "it is shorter than its header");
        let mut long = bytes.clone();
        long[..8].copy_from_slice(&(bytes.len() as u64).to_le_bytes());
        assert_eq!(Image::decode(&long).err().unwrap(), "its recipe's length is past its end");
        let mut broken = bytes.clone();
        broken[8] = b'[';
        assert!(Image::decode(&broken).is_err());
    }

    #[test]
    fn options_turn_off_the_checks_they_name_and_nothing_else() {
        let on = runtime_checks(&[]).unwrap();
        assert!(on.force_loop_bounding && on.bounds_checks && on.int_div_checks);
        let c = runtime_checks(&["no-loop-bounding".to_string()]).unwrap();
        assert!(!c.force_loop_bounding && c.bounds_checks && c.int_div_checks);
        let c = runtime_checks(&["unchecked".to_string()]).unwrap();
        assert!(!c.force_loop_bounding && !c.bounds_checks && !c.int_div_checks);
        let e = runtime_checks(&["-O3".to_string()]).unwrap_err();
        assert!(e.contains("`-O3` is not a WGSL option") && e.contains("no-loop-bounding"), "{e}");
    }

    /// wgpu's binding errors get what to do, with the shader's variable named: a buffer the
    /// shader writes that the spec leaves read-only, a declaration past the spec's buffers or in
    /// another group, a uniform where kerntune binds storage; other errors get nothing.
    #[test]
    fn binding_errors_say_which_declaration_and_what_to_do() {
        use kerntune_core::Access::{Read, ReadWrite, Write};
        let code = "override WG: u32 = 64u;\n// @group(0) @binding(0) var<storage, read> old: array<f32>;\n@group(0) @binding(0)\nvar<storage, read_write> img: array<f32>;\n@group(0) @binding(1) var<uniform> p: vec4<f32>;\n@group(1) @binding(0) var<storage, read> far: array<f32>;\n@group(0) @binding(2) var<storage, read> extra: array<f32>;\n";
        let msg = |g: usize, b: usize, reason: &str| {
            format!("./k.wgsl: In Device::create_compute_pipeline, label = 'k': Error matching shader requirements against the pipeline: Shader global ResourceBinding {{ group: {g}, binding: {b} }} is not available in the pipeline layout: {reason}")
        };
        let written = "Storage class Storage { access: StorageAccess(LOAD) } doesn't match the shader Storage { access: StorageAccess(LOAD | STORE) }";
        let h = binding_hint(&msg(0, 0, written), code, &[Read, Write], &[]).expect("a hint");
        assert!(h.starts_with("the shader writes `img` at @group(0) @binding(0) (`var<storage, read_write>`), but the 1st buffer argument"), "{h}");
        assert!(h.contains("`access = \"readwrite\"`"), "{h}");
        assert_eq!(binding_hint(&msg(0, 0, written), code, &[ReadWrite, Write], &[]), None, "not the spec's doing");
        let missing = "Binding is missing from the pipeline layout";
        let h = binding_hint(&msg(0, 2, missing), code, &[ReadWrite, Write], &[]).expect("a hint");
        assert!(h.contains("declares `extra` at @group(0) @binding(2), but the spec has 2 buffer argument(s), bound at @binding(0) … @binding(1)"), "{h}");
        let h = binding_hint(&msg(1, 0, missing), code, &[ReadWrite], &[]).expect("a hint");
        assert!(h.contains("@group(0) only; declare `far` at @group(1) @binding(0) in group 0"), "{h}");
        let uniform = "Storage class Storage { access: StorageAccess(LOAD | STORE) } doesn't match the shader Uniform";
        let h = binding_hint(&msg(0, 1, uniform), code, &[ReadWrite, Write, Read], &[]).expect("a hint");
        assert!(h.starts_with("kerntune binds `p` at @group(0) @binding(1), the 2nd buffer argument of [[args]], as a storage buffer"), "{h}");
        assert_eq!(binding_hint("./k.wgsl: Unable to find entry point 'kk'", code, &[Read], &[]), None);
        // A uniform past the spec's buffers: the scalars it meant to carry are constants.
        let h = binding_hint(&msg(0, 1, missing), code, &[ReadWrite], &["n".into(), "s".into()]).expect("a hint");
        assert!(h.starts_with("the shader declares `p` at @group(0) @binding(1) as a `var<uniform>`, and kerntune binds no uniform buffers"), "{h}");
        assert!(h.contains("scalar arguments (`n`, `s`) reach the shader as `const` declarations"), "{h}");
        assert_eq!(declared_space(code, 0, 0).as_deref(), Some("storage"));
        assert_eq!(declared_space(code, 3, 3), None);
    }
}

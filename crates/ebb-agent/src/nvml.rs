//! The real-GPU backend: NVIDIA's management library (NVML) through `nvml-wrapper`.
//!
//! NVML is initialised once, in [`NvmlProbe::open`], which also reads each card's static
//! facts (UUID, name, memory size, power limit). Every [`GpuProbe::read`] then asks only
//! for what changes. A reading a card cannot give is `None`; a card that fell off the bus
//! is reported `healthy: false` with the reason, and the other cards go on reading.

use crate::probe::GpuProbe;
use ebb_wire::agent::{Gpu, GpuProcess};
use nvml_wrapper::enum_wrappers::device::{
    Clock, EccCounter, MemoryError, RetirementCause, TemperatureSensor,
};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::error::NvmlError;
use nvml_wrapper::{Device, Nvml};
use std::path::Path;

/// The library `NvmlProbe::open(None)` loads, from the system's library search path
/// (nvml-wrapper's default).
#[cfg(not(windows))]
pub const DEFAULT_LIBRARY: &str = "libnvidia-ml.so.1";
/// The library `NvmlProbe::open(None)` loads, from the system's library search path
/// (nvml-wrapper's default).
#[cfg(windows)]
pub const DEFAULT_LIBRARY: &str = "nvml.dll";

const BYTES_PER_MIB: u64 = 1024 * 1024;

/// Why NVML could not be opened, in words an operator can act on.
#[derive(Debug, thiserror::Error)]
pub enum NvmlProbeError {
    #[error("NVML library not found at {library} ({detail}): is the NVIDIA driver installed?")]
    LibraryNotFound { library: String, detail: String },
    #[error(
        "{library} is not a usable NVML library ({detail}): point the agent at the NVIDIA \
         driver's libnvidia-ml.so.1"
    )]
    NotNvml { library: String, detail: String },
    #[error(
        "NVML ({library}) found no running NVIDIA kernel driver: load it (`modprobe nvidia`) \
         and check that `nvidia-smi` works"
    )]
    DriverNotLoaded { library: String },
    #[error(
        "NVML ({library}) was refused access to the GPUs: run the agent as a user that can \
         open /dev/nvidia*"
    )]
    NoPermission { library: String },
    #[error(
        "NVML ({library}) does not match the running NVIDIA kernel driver: reboot, or reload \
         the nvidia module, after a driver upgrade"
    )]
    DriverMismatch { library: String },
    #[error("NVML ({library}) failed to initialise: {error}")]
    Init { library: String, error: NvmlError },
    #[error("NVML ({library}) could not count the GPUs: {error}")]
    DeviceCount { library: String, error: NvmlError },
    #[error(
        "NVML ({library}) sees no GPUs on this host: check `nvidia-smi -L`, and in a container \
         that the GPUs are passed through"
    )]
    NoGpus { library: String },
}

impl NvmlProbeError {
    fn from_init(library: String, error: NvmlError) -> Self {
        match error {
            NvmlError::LibloadingError(error) => Self::LibraryNotFound {
                library,
                detail: error.to_string(),
            },
            NvmlError::FailedToLoadSymbol(detail) => Self::NotNvml { library, detail },
            NvmlError::DriverNotLoaded => Self::DriverNotLoaded { library },
            NvmlError::NoPermission => Self::NoPermission { library },
            NvmlError::LibRmVersionMismatch => Self::DriverMismatch { library },
            error => Self::Init { library, error },
        }
    }
}

/// GPUs read through NVML.
///
/// The NVML handle is leaked on purpose and lives until the process exits: NVML's device
/// and event-set handles borrow it, the probe keeps both, and safe Rust cannot hold a value
/// and borrows of it in one struct. The agent opens one probe for its whole life, as
/// nvidia-smi-like tools keep one global NVML; the driver releases it at exit.
#[derive(Debug)]
pub struct NvmlProbe {
    cards: Vec<Card>,
}

/// One card: what was learned at open, and how to read it now.
#[derive(Debug)]
struct Card {
    facts: StaticFacts,
    /// The card's handle, or why the card could not be opened. NVML recovers a lost GPU
    /// only after a reset or reboot, so a card down at open is not retried.
    device: Result<Device<'static>, String>,
    #[cfg(target_os = "linux")]
    xids: Option<std::sync::Mutex<XidWatch>>,
}

#[derive(Debug, Clone)]
struct StaticFacts {
    index: u32,
    uuid: String,
    model: String,
    /// `None` when NVML could not read it.
    memory_total_mib: Option<u32>,
    power_limit_w: Option<f32>,
}

impl StaticFacts {
    /// The card with its static facts and no readings.
    fn gpu(&self) -> Gpu {
        Gpu {
            index: self.index,
            uuid: self.uuid.clone(),
            model: self.model.clone(),
            memory_total_mib: self.memory_total_mib,
            power_limit_w: self.power_limit_w,
            healthy: true,
            ..Gpu::default()
        }
    }
}

impl NvmlProbe {
    /// Loads NVML from `library_path` (or [`DEFAULT_LIBRARY`] from the library search
    /// path), initialises it and reads every card's static facts.
    ///
    /// A card that cannot be opened does not fail the probe: it is reported unhealthy.
    pub fn open(library_path: Option<&Path>) -> Result<Self, NvmlProbeError> {
        let library = library_path.map_or_else(
            || DEFAULT_LIBRARY.to_string(),
            |path| path.display().to_string(),
        );
        let nvml = match library_path {
            Some(path) => Nvml::builder().lib_path(path.as_os_str()).init(),
            None => Nvml::init(),
        }
        .map_err(|error| NvmlProbeError::from_init(library.clone(), error))?;
        let count = nvml
            .device_count()
            .map_err(|error| NvmlProbeError::DeviceCount {
                library: library.clone(),
                error,
            })?;
        if count == 0 {
            return Err(NvmlProbeError::NoGpus { library });
        }
        // See the type's docs: leaked only once the probe is sure to be made.
        let nvml: &'static Nvml = Box::leak(Box::new(nvml));
        let cards = (0..count).map(|index| Card::open(nvml, index)).collect();
        Ok(Self { cards })
    }

    /// How many GPUs NVML counted (those that could not be opened included).
    pub fn gpu_count(&self) -> usize {
        self.cards.len()
    }
}

impl GpuProbe for NvmlProbe {
    fn backend(&self) -> &'static str {
        "nvml"
    }

    /// NVML reads the hardware now; `_now_ms` only stamps the sample, which the sampler does.
    fn read(&self, _now_ms: u64) -> Vec<Gpu> {
        self.cards.iter().map(Card::read).collect()
    }
}

impl Card {
    fn open(nvml: &'static Nvml, index: u32) -> Self {
        let unknown = |reason: String| Card {
            facts: StaticFacts {
                index,
                // Never a real UUID (those start with `GPU-`), so it cannot match a lease.
                uuid: format!("unknown-gpu-{index}"),
                model: "unknown".to_string(),
                memory_total_mib: None,
                power_limit_w: None,
            },
            device: Err(reason),
            #[cfg(target_os = "linux")]
            xids: None,
        };
        let device = match nvml.device_by_index(index) {
            Ok(device) => device,
            Err(error) => return unknown(down_reason(&error)),
        };
        // Without its UUID a card cannot be leased or told apart from the others.
        let uuid = match device.uuid() {
            Ok(uuid) => uuid,
            Err(error) => return unknown(down_reason(&error)),
        };
        let facts = StaticFacts {
            index,
            uuid,
            model: device.name().unwrap_or_else(|_| "unknown".to_string()),
            memory_total_mib: device.memory_info().ok().map(|memory| mib(memory.total)),
            power_limit_w: device.enforced_power_limit().ok().map(milliwatts_to_w),
        };
        Card {
            facts,
            #[cfg(target_os = "linux")]
            xids: XidWatch::register(nvml, &device).map(std::sync::Mutex::new),
            device: Ok(device),
        }
    }

    fn read(&self) -> Gpu {
        let mut gpu = self.facts.gpu();
        let readings = match &self.device {
            Ok(device) => read_dynamic(device, &mut gpu),
            Err(reason) => Err(reason.clone()),
        };
        if let Err(reason) = readings {
            // Whatever was read before the card failed is dropped with it.
            return Gpu {
                healthy: false,
                health_reason: Some(reason),
                ..self.facts.gpu()
            };
        }
        #[cfg(target_os = "linux")]
        if let Some(xids) = &self.xids {
            let mut xids = xids
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            gpu.xid_errors = Some(xids.poll());
        }
        gpu
    }
}

/// Fills `gpu`'s dynamic readings, or says why the card as a whole failed.
fn read_dynamic(device: &Device<'_>, gpu: &mut Gpu) -> Result<(), String> {
    let utilization = reading(device.utilization_rates())?;
    gpu.gpu_util_pct = utilization.as_ref().map(|rates| rates.gpu as f32);
    gpu.memory_util_pct = utilization.as_ref().map(|rates| rates.memory as f32);
    gpu.memory_used_mib = reading(device.memory_info())?.map(|memory| mib(memory.used));
    gpu.temperature_c = reading(device.temperature(TemperatureSensor::Gpu))?.map(|c| c as f32);
    gpu.power_draw_w = reading(device.power_usage())?.map(milliwatts_to_w);
    gpu.sm_clock_mhz = reading(device.clock_info(Clock::SM))?;
    gpu.memory_clock_mhz = reading(device.clock_info(Clock::Memory))?;
    gpu.processes = reading(device.running_compute_processes())?.map(|processes| {
        processes
            .into_iter()
            .map(|process| GpuProcess {
                pid: process.pid,
                name: process_name(device, process.pid),
                used_memory_mib: match process.used_gpu_memory {
                    UsedGpuMemory::Used(bytes) => Some(mib(bytes)),
                    UsedGpuMemory::Unavailable => None,
                },
            })
            .collect()
    });
    gpu.ecc_corrected =
        reading(device.total_ecc_errors(MemoryError::Corrected, EccCounter::Volatile))?;
    gpu.ecc_uncorrected =
        reading(device.total_ecc_errors(MemoryError::Uncorrected, EccCounter::Volatile))?;
    let single_bit = reading(device.retired_pages(RetirementCause::MultipleSingleBitEccErrors))?;
    let double_bit = reading(device.retired_pages(RetirementCause::DoubleBitEccError))?;
    gpu.retired_pages = match (single_bit, double_bit) {
        (Some(single), Some(double)) => {
            Some(u32::try_from(single.len() + double.len()).unwrap_or(u32::MAX))
        }
        _ => None,
    };
    Ok(())
}

/// The name NVML gives a process (as nvidia-smi shows it, the path of its program);
/// `None` when it cannot say (the process ended, or it belongs to another container).
fn process_name(device: &Device<'_>, pid: u32) -> Option<String> {
    device
        .nvml()
        .sys_process_name(pid, PROCESS_NAME_BYTES)
        .ok()
        .filter(|name| !name.is_empty())
}

/// NVML's buffer for a process name, as nvidia-smi sizes it.
const PROCESS_NAME_BYTES: usize = 256;

/// A reading, `None` when the card cannot give it, or `Err` when the card itself is down.
fn reading<T>(result: Result<T, NvmlError>) -> Result<Option<T>, String> {
    match result {
        Ok(value) => Ok(Some(value)),
        Err(error @ (NvmlError::GpuLost | NvmlError::ResetRequired)) => Err(down_reason(&error)),
        Err(_) => Ok(None),
    }
}

/// Why a card is unusable, for `health_reason`.
fn down_reason(error: &NvmlError) -> String {
    match error {
        NvmlError::GpuLost => "the GPU has fallen off the bus (NVML: GPU is lost); \
                               it needs a reset or a host reboot"
            .to_string(),
        NvmlError::ResetRequired => "the GPU needs a reset before it can be used again \
                                     (NVML: reset required)"
            .to_string(),
        error => format!("NVML could not open the GPU: {error}"),
    }
}

fn mib(bytes: u64) -> u32 {
    u32::try_from(bytes / BYTES_PER_MIB).unwrap_or(u32::MAX)
}

fn milliwatts_to_w(milliwatts: u32) -> f32 {
    milliwatts as f32 / 1000.0
}

/// Counts a card's critical Xid events, from an NVML event set polled without waiting.
///
/// One set per card: nvml-wrapper frees a set when registering a card in it fails, so a
/// shared set would be lost to the first card that does not support Xid events.
#[cfg(target_os = "linux")]
#[derive(Debug)]
struct XidWatch {
    events: nvml_wrapper::EventSet<'static>,
    seen: u32,
}

#[cfg(target_os = "linux")]
impl XidWatch {
    /// A bound on events taken per read, so a flood cannot stall the sampler.
    const MAX_EVENTS_PER_READ: usize = 1024;

    /// `None` when the card (or driver) cannot report Xid events.
    fn register(nvml: &'static Nvml, device: &Device<'static>) -> Option<Self> {
        use nvml_wrapper::bitmasks::event::EventTypes;
        let events = nvml.create_event_set().ok()?;
        let events = device
            .register_events(EventTypes::CRITICAL_XID_ERROR, events)
            .ok()?;
        Some(Self { events, seen: 0 })
    }

    /// Takes the events waiting now and returns the count since the probe opened.
    fn poll(&mut self) -> u32 {
        use nvml_wrapper::bitmasks::event::EventTypes;
        for _ in 0..Self::MAX_EVENTS_PER_READ {
            // A timeout means no event is waiting; any other error, nothing to take now.
            let Ok(event) = self.events.wait(0) else {
                break;
            };
            if event.event_type.contains(EventTypes::CRITICAL_XID_ERROR) {
                self.seen = self.seen.saturating_add(1);
            }
        }
        self.seen
    }
}

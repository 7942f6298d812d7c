// The clap definition of `model` (see [`super`]: no crate path but `crate::cli::values`).

use super::options::{EraseSize, Size, Use};
#[allow(unused_imports)]
use crate::cli::values::*;

const HELP: &str = "\
Examples:
  flashscope model --kind spi-nor --erase-time 0.15s --erase-size 64K --program-time 0.25ms \\
                   --page 256 --bus-clock 100MHz --bus-lines 4 --size 32M
  flashscope model --kind spi-nand --erase-time 3ms --erase-size 128K --program-time 0.4ms \\
                   --page 2K --bus-clock 100MHz --bus-lines 4 --cmd-bytes 5
  flashscope model --reference --media spi-nand

write time = erase time × erase blocks + program time × pages + total ÷ bus rate
             (+ command bytes per page on the command lines), bus rate = clock × lines ÷ 8.
Exit codes: 0 ok, 2 a missing, unparsable or non-positive figure, or a filter that
matches no row.";

/// Arguments of `model`.
#[derive(Debug, clap::Args)]
#[command(after_help = HELP)]
pub struct Args {
    /// Kind of flash and bus.
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// Block erase time (tBE), e.g. 3ms.
    #[arg(long, allow_hyphen_values = true, value_parser = whole(Figure::EraseTime))]
    pub erase_time: Option<u64>,
    #[command(flatten)]
    pub erase_block: EraseSize<ModelEraseSize>,
    /// Page program time (tPP, tPROG), e.g. 400us.
    #[arg(long, allow_hyphen_values = true, value_parser = whole(Figure::ProgramTime))]
    pub program_time: Option<u64>,
    /// Page size, e.g. 2K.
    #[arg(long, allow_hyphen_values = true, value_parser = whole(Figure::Page))]
    pub page: Option<u64>,
    /// Bus clock, e.g. 100MHz.
    #[arg(long, allow_hyphen_values = true, value_parser = hz(Figure::BusClock))]
    pub bus_clock: Option<f64>,
    /// Data lines: 1, 2 or 4 for SPI, 8 or 16 for raw NAND.
    #[arg(long, allow_hyphen_values = true, value_parser = whole(Figure::BusLines))]
    pub bus_lines: Option<u64>,
    /// Command + address + dummy bytes per command (default 0).
    #[arg(long, allow_hyphen_values = true, value_parser = whole(Figure::CmdBytes))]
    pub cmd_bytes: Option<u64>,
    #[command(flatten)]
    pub total: Size<ModelSize>,
    /// Bytes per read command (default: a page for NAND, the whole total for NOR).
    #[arg(long, allow_hyphen_values = true, value_parser = whole(Figure::ReadChunk))]
    pub read_chunk: Option<u64>,
    /// Print the vendor's measured figures (filter with --media, --part).
    #[arg(long)]
    pub reference: bool,
    /// Reference filter: media, e.g. spi-nand, raw-nand, mmc.
    #[arg(long, requires = "reference")]
    pub media: Option<String>,
    /// Reference filter: part number (substring), e.g. GD5F.
    #[arg(long, requires = "reference")]
    pub part: Option<String>,
}

/// `--kind`: [`FlashKind`] on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KindArg {
    /// Serial NOR: commands on one line, data on 1, 2 or 4; reads continue across pages.
    SpiNor,
    /// Serial NAND: commands on one line, data on 1, 2 or 4; one read command per page.
    SpiNand,
    /// Parallel NAND: commands, addresses and data on the 8- or 16-bit bus; one read per page.
    RawNand,
}

pub struct ModelEraseSize;
impl Use for ModelEraseSize {
    const HELP: &'static str = "Erase block size, e.g. 128K";
    const ALIASES: &'static [&'static str] = &["erase-block"];
}

pub struct ModelSize;
impl Use for ModelSize {
    const HELP: &'static str = "Amount written for the model (default 128M)";
    const ALIASES: &'static [&'static str] = &["total"];
}

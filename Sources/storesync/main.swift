import CLI
import Foundation

exit(await StoreSyncCLI.main(CommandLine.arguments))
